/*
 * asl-floor: the ASL worker's design in minimal C, the floor `make bench` measures the Java
 * middleware's default worker (-t 8, --worker-batch 1) against.
 *
 * Design (exactly the middleware's, nothing more):
 *   - one net thread: epoll (level-triggered) over the listening socket and non-blocking client
 *     sockets; one read() per readiness; cuts whole memcached text requests out of the bytes read
 *     and stages them; at the end of each epoll round publishes the staged requests to the queue;
 *   - a request queue: mutex + one condition variable per worker; the most recently parked worker
 *     is woken first, a woken worker not yet back counts towards the wake-ups needed, and the
 *     signal is sent after the mutex is released (as the middleware's RequestQueue);
 *   - N workers, each with its own blocking TCP connection (TCP_NODELAY) to the one memcached:
 *     write the request, read the reply until it is complete, write the reply to the client
 *     (waiting in poll() while the client socket is full). One request at a time per worker, and
 *     one request in flight per client connection (the next pipelined one is queued by the worker
 *     that answered the previous, so replies keep the requests' order).
 * No statistics, no replication, no sharding, one backend. Meant for benchmarks, not production:
 * the commands are those of the text protocol whose request and reply ends the floor can find
 * (get/gets/gat/gats, set/add/replace/append/prepend/cas with their data block, delete, incr,
 * decr, touch, version, verbosity, flush_all, stats; noreply honoured); meta commands are not.
 *
 * Build: gcc -O2 -pthread -o asl-floor asl-floor.c (scripts/bench does, into target/asl-floor/).
 * Usage: asl-floor -l 127.0.0.1 -p PORT -t WORKERS -m HOST:PORT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

enum {
  READ_CHUNK_BYTES = 16 * 1024,
  MAX_LINE_BYTES = 1024 * 1024,          /* a request line longer than this is refused */
  MAX_DATA_BYTES = 64 * 1024 * 1024,     /* a data block larger than this is refused */
  BACKEND_TIMEOUT_MS = 5000,             /* a backend read or write waits at most this long */
  CLIENT_WRITE_TIMEOUT_MS = 10000,       /* a client that reads nothing this long is dropped */
  MAX_EVENTS = 256,
};

/* Kinds of reply a request gets from memcached. */
enum reply_kind {
  REPLY_LINE,  /* one line: STORED, DELETED, a number, VERSION ..., an error */
  REPLY_BLOCK, /* VALUE blocks or STAT lines up to END, or one error line */
  REPLY_NONE,  /* noreply: nothing comes back */
};

/* A growable byte buffer. */
struct buf {
  char *data;
  size_t len, cap;
};

/* A client connection. `lock` guards `in`, `busy` and `closed`; `req` belongs to whoever holds
 * the busy token (the queue or the worker serving the request). */
struct conn {
  int fd;
  pthread_mutex_t lock;
  struct buf in;          /* bytes read, not yet cut into a request */
  struct buf req;         /* the request in flight */
  enum reply_kind kind;   /* what reply `req` gets */
  int busy;               /* a request of this connection is queued or being served */
  int closed;             /* the net thread saw EOF or an error; freed when not busy */
  struct conn *next;      /* queue link */
};

/* A worker's parking place: set `signalled` under the queue lock, then signal `cond`. */
struct waiter {
  pthread_cond_t cond;
  int signalled;
  struct waiter *next; /* the parked stack (most recent first), then the list to signal */
};

/* The request queue (one request per connection in it at a time). */
static struct {
  pthread_mutex_t lock;
  struct conn *head, *tail; /* guarded by lock */
  int length;               /* guarded by lock */
  struct waiter *parked;    /* guarded by lock: the most recently parked first */
  int waking;               /* guarded by lock: signalled and not yet back under the lock */
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct sockaddr_storage backend_addr;
static socklen_t backend_addr_len;

static void die(const char *what) {
  fprintf(stderr, "asl-floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void buf_reserve(struct buf *b, size_t more) {
  if (b->len + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more) cap *= 2;
  char *data = realloc(b->data, cap);
  if (!data) die("out of memory");
  b->data = data;
  b->cap = cap;
}

static void buf_consume(struct buf *b, size_t n) {
  memmove(b->data, b->data + n, b->len - n);
  b->len -= n;
}

/* ---------------------------------------------------------------------------------------------
 * The queue. Called with queue.lock held: signal_needed() moves parked workers to a list the
 * caller signals after unlocking (wake_all), one per queued request not covered by workers
 * already waking.
 */
static struct waiter *signal_needed(void) {
  struct waiter *list = NULL;
  int needed = queue.length - queue.waking;
  while (needed-- > 0 && queue.parked) {
    struct waiter *w = queue.parked;
    queue.parked = w->next;
    w->signalled = 1;
    w->next = list;
    list = w;
    queue.waking++;
  }
  return list;
}

static void wake_all(struct waiter *list) {
  while (list) {
    struct waiter *next = list->next;
    pthread_cond_signal(&list->cond);
    list = next;
  }
}

/* Appends the chain first..last of n connections and wakes the workers they need. */
static void queue_append(struct conn *first, struct conn *last, int n) {
  pthread_mutex_lock(&queue.lock);
  if (queue.tail) queue.tail->next = first; else queue.head = first;
  queue.tail = last;
  queue.length += n;
  struct waiter *wake = signal_needed();
  pthread_mutex_unlock(&queue.lock);
  wake_all(wake);
}

/* Worker: waits for a connection with a request and takes it. */
static struct conn *queue_take(struct waiter *self) {
  pthread_mutex_lock(&queue.lock);
  while (!queue.head) {
    self->signalled = 0;
    self->next = queue.parked;
    queue.parked = self;
    while (!self->signalled) pthread_cond_wait(&self->cond, &queue.lock);
    queue.waking--;
  }
  struct conn *c = queue.head;
  queue.head = c->next;
  if (!queue.head) queue.tail = NULL;
  c->next = NULL;
  queue.length--;
  struct waiter *wake = queue.head ? signal_needed() : NULL;
  pthread_mutex_unlock(&queue.lock);
  wake_all(wake);
  return c;
}

/* ---------------------------------------------------------------------------------------------
 * The memcached text protocol: where a request and a reply end.
 */

/* The n-th space-separated token of the line [p, end) (0 = the command), or NULL. */
static const char *token(const char *p, const char *end, int n, size_t *len) {
  for (int i = 0;; i++) {
    while (p < end && *p == ' ') p++;
    if (p == end) return NULL;
    const char *start = p;
    while (p < end && *p != ' ') p++;
    if (i == n) {
      *len = (size_t)(p - start);
      return start;
    }
  }
}

static int token_is(const char *t, size_t len, const char *word) {
  return t && len == strlen(word) && memcmp(t, word, len) == 0;
}

/* A decimal token as a number; -1 if it is not one. */
static long long token_number(const char *t, size_t len) {
  if (!t || len == 0 || len > 18) return -1;
  long long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (t[i] < '0' || t[i] > '9') return -1;
    v = v * 10 + (t[i] - '0');
  }
  return v;
}

/* The length of the first whole request in [p, p + n): 0 if more bytes are needed, -1 if the
 * request is malformed (with *error set to the reply). Sets *kind to the reply it gets. */
static long request_length(const char *p, size_t n, enum reply_kind *kind, const char **error) {
  const char *nl = memchr(p, '\n', n < MAX_LINE_BYTES ? n : MAX_LINE_BYTES);
  if (!nl) {
    if (n >= MAX_LINE_BYTES) {
      *error = "CLIENT_ERROR line too long\r\n";
      return -1;
    }
    return 0;
  }
  size_t line_bytes = (size_t)(nl - p) + 1;
  const char *end = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
  size_t cmd_len = 0, last_len = 0;
  const char *cmd = token(p, end, 0, &cmd_len);
  const char *last = NULL;
  for (int i = 0;; i++) { /* the last token, for noreply */
    size_t len;
    const char *t = token(p, end, i, &len);
    if (!t) break;
    last = t;
    last_len = len;
  }
  int noreply = token_is(last, last_len, "noreply");
  if (token_is(cmd, cmd_len, "get") || token_is(cmd, cmd_len, "gets") ||
      token_is(cmd, cmd_len, "gat") || token_is(cmd, cmd_len, "gats") ||
      token_is(cmd, cmd_len, "stats")) {
    *kind = REPLY_BLOCK;
    return (long)line_bytes;
  }
  *kind = noreply ? REPLY_NONE : REPLY_LINE;
  if (token_is(cmd, cmd_len, "set") || token_is(cmd, cmd_len, "add") ||
      token_is(cmd, cmd_len, "replace") || token_is(cmd, cmd_len, "append") ||
      token_is(cmd, cmd_len, "prepend") || token_is(cmd, cmd_len, "cas")) {
    size_t len;
    const char *t = token(p, end, 4, &len);
    long long data_bytes = token_number(t, len);
    if (data_bytes < 0 || data_bytes > MAX_DATA_BYTES) {
      *error = "CLIENT_ERROR bad command line format\r\n";
      return -1;
    }
    size_t total = line_bytes + (size_t)data_bytes + 2;
    return n >= total ? (long)total : 0;
  }
  if (!cmd) {
    *error = "ERROR\r\n";
    return -1;
  }
  if (token_is(cmd, cmd_len, "quit")) { /* close the connection, as memcached does */
    *error = "";
    return -1;
  }
  return (long)line_bytes;
}

/* The length of the whole reply in [p, p + n) to a request of `kind`, or 0 if incomplete. */
static size_t reply_length(const char *p, size_t n, enum reply_kind kind) {
  size_t pos = 0;
  for (;;) {
    const char *nl = memchr(p + pos, '\n', n - pos);
    if (!nl) return 0;
    size_t next = (size_t)(nl - p) + 1;
    if (kind == REPLY_LINE) return next;
    const char *line = p + pos, *end = nl > line && nl[-1] == '\r' ? nl - 1 : nl;
    size_t len;
    const char *cmd = token(line, end, 0, &len);
    if (token_is(cmd, len, "VALUE")) { /* VALUE <key> <flags> <bytes> [<cas>] then the data */
      const char *t = token(line, end, 3, &len);
      long long data_bytes = token_number(t, len);
      if (data_bytes < 0) return next; /* malformed: hand back what came */
      pos = next + (size_t)data_bytes + 2;
      if (pos > n) return 0;
    } else if (token_is(cmd, len, "STAT")) {
      pos = next;
    } else { /* END or an error line ends the reply */
      return next;
    }
  }
}

/* ---------------------------------------------------------------------------------------------
 * A worker: one blocking backend connection, one request at a time.
 */

static int backend_connect(void) {
  int fd = socket(backend_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct timeval timeout = {BACKEND_TIMEOUT_MS / 1000, (BACKEND_TIMEOUT_MS % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (connect(fd, (struct sockaddr *)&backend_addr, backend_addr_len) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Writes all of [p, p + n) to a blocking socket; 0 on success. */
static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Writes all of [p, p + n) to a non-blocking client socket, waiting while it is full; 0 on
 * success, -1 if the client is gone or read nothing for CLIENT_WRITE_TIMEOUT_MS. */
static int write_client(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd pfd = {.fd = fd, .events = POLLOUT};
      if (poll(&pfd, 1, CLIENT_WRITE_TIMEOUT_MS) <= 0) return -1;
    } else if (!(w < 0 && errno == EINTR)) {
      return -1;
    }
  }
  return 0;
}

/* Sends the request to the backend and reads its whole reply into `reply`; 0 on success. */
static int backend_round_trip(int *backend, const struct conn *c, struct buf *reply) {
  reply->len = 0;
  if (*backend < 0 && (*backend = backend_connect()) < 0) return -1;
  if (write_all(*backend, c->req.data, c->req.len) < 0) goto broken;
  if (c->kind == REPLY_NONE) return 0;
  for (;;) {
    buf_reserve(reply, READ_CHUNK_BYTES);
    ssize_t r = read(*backend, reply->data + reply->len, reply->cap - reply->len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) goto broken;
    reply->len += (size_t)r;
    size_t whole = reply_length(reply->data, reply->len, c->kind);
    if (whole == reply->len) return 0;
    if (whole > 0) goto broken; /* bytes beyond the reply: out of step with the backend */
  }
broken:
  close(*backend);
  *backend = -1;
  return -1;
}

/* Under c->lock: cuts the next whole request out of c->in into c->req. Returns 1 if one was cut,
 * 0 if more bytes are needed, -1 if the input is malformed (the error reply is written). */
static int cut_request(struct conn *c) {
  const char *error = NULL;
  long n = request_length(c->in.data, c->in.len, &c->kind, &error);
  if (n < 0) {
    if (write(c->fd, error, strlen(error)) < 0) { /* best effort; the connection is closed */ }
    shutdown(c->fd, SHUT_RDWR);
    return -1;
  }
  if (n == 0) return 0;
  c->req.len = 0;
  buf_reserve(&c->req, (size_t)n);
  memcpy(c->req.data, c->in.data, (size_t)n);
  c->req.len = (size_t)n;
  buf_consume(&c->in, (size_t)n);
  return 1;
}

static void conn_free(struct conn *c) {
  close(c->fd);
  pthread_mutex_destroy(&c->lock);
  free(c->in.data);
  free(c->req.data);
  free(c);
}

static void *worker_main(void *arg) {
  int backend = (int)(long)arg;
  struct waiter self = {.signalled = 0};
  pthread_cond_init(&self.cond, NULL);
  struct buf reply = {0};
  static const char unavailable[] = "SERVER_ERROR backend unavailable\r\n";
  for (;;) {
    struct conn *c = queue_take(&self);
    int ok;
    if (backend_round_trip(&backend, c, &reply) == 0)
      ok = write_client(c->fd, reply.data, reply.len) == 0;
    else
      ok = c->kind == REPLY_NONE || write_client(c->fd, unavailable, sizeof unavailable - 1) == 0;
    if (!ok) shutdown(c->fd, SHUT_RDWR); /* the net thread sees EOF and closes it */
    /* Hand the connection back: queue its next pipelined request, or mark it idle. */
    pthread_mutex_lock(&c->lock);
    int next = ok && !c->closed ? cut_request(c) : 0;
    int free_it = 0;
    if (next != 1) {
      c->busy = 0;
      free_it = c->closed;
    }
    pthread_mutex_unlock(&c->lock);
    if (next == 1)
      queue_append(c, c, 1);
    else if (free_it)
      conn_free(c);
  }
  return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * The net thread (main): accepts, reads, stages whole requests, publishes them once per round.
 */

static void accept_all(int epfd, int listener) {
  for (;;) {
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
        perror("asl-floor: accept");
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct conn *c = calloc(1, sizeof *c);
    if (!c) die("out of memory");
    c->fd = fd;
    pthread_mutex_init(&c->lock, NULL);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
  }
}

/* Reads once from a readable client; returns the connection if a request of it was staged. */
static struct conn *read_client(int epfd, struct conn *c) {
  pthread_mutex_lock(&c->lock);
  buf_reserve(&c->in, READ_CHUNK_BYTES);
  ssize_t r = read(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len);
  int staged = 0, free_it = 0;
  if (r > 0) {
    c->in.len += (size_t)r;
    if (!c->busy && cut_request(c) == 1) {
      c->busy = 1;
      staged = 1;
    }
  } else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL); /* no more events point at c */
    c->closed = 1;
    free_it = !c->busy; /* else the worker serving it frees it */
  }
  pthread_mutex_unlock(&c->lock);
  if (free_it) conn_free(c);
  return staged ? c : NULL;
}

static void parse_backend(const char *spec) {
  const char *colon = strrchr(spec, ':');
  if (!colon || colon == spec || !colon[1]) {
    fprintf(stderr, "asl-floor: -m wants HOST:PORT, got '%s'\n", spec);
    exit(2);
  }
  char host[256];
  snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
  int rc = getaddrinfo(host, colon + 1, &hints, &res);
  if (rc != 0) {
    fprintf(stderr, "asl-floor: backend '%s': %s\n", spec, gai_strerror(rc));
    exit(2);
  }
  memcpy(&backend_addr, res->ai_addr, res->ai_addrlen);
  backend_addr_len = res->ai_addrlen;
  freeaddrinfo(res);
}

static int listen_on(const char *host, int port) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
    fprintf(stderr, "asl-floor: -l wants an IPv4 address, got '%s'\n", host);
    exit(2);
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0) die("socket");
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
  if (listen(fd, 1024) < 0) die("listen");
  return fd;
}

static void usage(void) {
  fprintf(stderr, "usage: asl-floor -l LISTEN_IP -p PORT -t WORKERS -m HOST:PORT\n");
  exit(2);
}

int main(int argc, char **argv) {
  const char *listen_host = "127.0.0.1", *backend = NULL;
  long port = -1, workers = 8;
  int opt;
  while ((opt = getopt(argc, argv, "l:p:t:m:")) != -1) {
    char *end;
    switch (opt) {
      case 'l': listen_host = optarg; break;
      case 'p': port = strtol(optarg, &end, 10); if (*end || port < 0 || port > 65535) usage(); break;
      case 't': workers = strtol(optarg, &end, 10); if (*end || workers < 1 || workers > 1024) usage(); break;
      case 'm': backend = optarg; break;
      default: usage();
    }
  }
  if (port < 0 || !backend || optind != argc) usage();
  parse_backend(backend);
  signal(SIGPIPE, SIG_IGN); /* a vanished client is an error return, not a signal */
  int listener = listen_on(listen_host, (int)port);
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) die("epoll_create1");
  struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &lev) < 0) die("epoll_ctl");
  for (long i = 0; i < workers; i++) { /* connect every worker now: a wrong -m fails at once */
    int fd = backend_connect();
    if (fd < 0) die("connect to the backend");
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker_main, (void *)(long)fd) != 0) die("pthread_create");
  }
  fprintf(stderr, "asl-floor: listening on %s:%ld, %ld workers, backend %s\n", listen_host, port,
          workers, backend);
  struct epoll_event events[MAX_EVENTS];
  for (;;) {
    int n = epoll_wait(epfd, events, MAX_EVENTS, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    struct conn *first = NULL, *last = NULL;
    int staged = 0;
    for (int i = 0; i < n; i++) {
      if (!events[i].data.ptr) {
        accept_all(epfd, listener);
        continue;
      }
      struct conn *c = read_client(epfd, events[i].data.ptr);
      if (c) {
        if (last) last->next = c; else first = c;
        last = c;
        staged++;
      }
    }
    if (staged) queue_append(first, last, staged); /* publish the round */
  }
}
