package dev.cachelab.middleware.protocol;

import dev.cachelab.middleware.protocol.Request.Status;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A redis client connection's own state, its protocol version ({@code HELLO 2} or {@code 3}), its
 * name and its id, and the commands about the connection that the middleware answers itself: {@code
 * HELLO}, {@code CLIENT SETNAME|GETNAME|ID|SETINFO}, {@code SELECT 0}, {@code PING}, {@code ECHO}
 * and {@code QUIT}. The {@link RespParser} frames a request and hands it here before placing its
 * keys; nothing of these commands reaches a server. One per client connection; its net thread only.
 */
final class RespConnectionState {
  /** Client ids, as {@code CLIENT ID} and {@code HELLO} give them: one per connection. */
  private static final AtomicLong NEXT_CLIENT_ID = new AtomicLong();

  private static final String BAD_CLIENT_NAME =
      "Client names cannot contain spaces, newlines or special characters.";

  private final long clientId = NEXT_CLIENT_ID.incrementAndGet();
  private int protocolVersion = 2;
  private byte[] clientName;

  /** Whether the connection speaks RESP3 (after {@code HELLO 3}). */
  boolean resp3() {
    return protocolVersion == 3;
  }

  /**
   * Answers {@code request} if {@code command} (its argument count already checked) is about the
   * connection: sets the request's status and reply and returns true; else leaves it and returns
   * false.
   */
  boolean answer(RespCommand command, Request request) {
    switch (command) {
      case PING ->
          request.setLocalResp(
              Status.LOCAL,
              command,
              request.tokenCount() == 1
                  ? RespReplies.PONG
                  : RespReplies.bulk(
                      request.bytes(), request.tokenStart(1), RespTokens.length(request, 1)));
      case ECHO ->
          request.setLocalResp(
              Status.LOCAL,
              command,
              RespReplies.bulk(
                  request.bytes(), request.tokenStart(1), RespTokens.length(request, 1)));
      case QUIT -> request.setLocalResp(Status.QUIT, command, RespReplies.OK);
      case SELECT -> select(request);
      case HELLO -> hello(request);
      case CLIENT -> {
        byte[] reply = client(request);
        if (reply[0] == '-') {
          request.setRejected(Status.REJECT, reply);
        } else {
          request.setLocalResp(Status.LOCAL, command, reply);
        }
      }
      default -> {
        return false;
      }
    }
    return true;
  }

  /**
   * {@code HELLO [protover [AUTH user pass] [SETNAME name]]} as redis 7 answers it: the server map
   * (an array of pairs under RESP2, a map under RESP3), after switching the connection to {@code
   * protover}; {@code -NOPROTO} for a version other than 2 or 3. {@code AUTH} is refused: the
   * middleware uses its servers without a password.
   */
  private void hello(Request request) {
    int args = request.tokenCount();
    int version = protocolVersion;
    byte[] name = clientName;
    if (args > 1) {
      long asked = RespTokens.number(request, 1);
      if (asked == Long.MIN_VALUE) {
        request.setRejected(
            Status.REJECT, RespReplies.error("Protocol version is not an integer or out of range"));
        return;
      }
      if (asked < 2 || asked > 3) {
        request.setRejected(
            Status.REJECT, RespReplies.error("NOPROTO", "unsupported protocol version"));
        return;
      }
      version = (int) asked;
    }
    for (int t = 2; t < args; t++) {
      String option = RespTokens.text(request, t);
      if (option.equalsIgnoreCase("SETNAME") && t + 1 < args) {
        name = RespTokens.bytes(request, ++t);
        if (!validClientName(name)) {
          request.setRejected(Status.REJECT, RespReplies.error(BAD_CLIENT_NAME));
          return;
        }
      } else if (option.equalsIgnoreCase("AUTH") && t + 2 < args) {
        request.setRejected(
            Status.REJECT,
            RespReplies.error(
                "HELLO AUTH is not supported by the middleware (its servers are used without a"
                    + " password)"));
        return;
      } else {
        request.setRejected(
            Status.REJECT, RespReplies.error("Syntax error in HELLO option '" + option + "'"));
        return;
      }
    }
    protocolVersion = version;
    clientName = name;
    request.setLocalResp(Status.LOCAL, RespCommand.HELLO, RespReplies.hello(version, clientId));
  }

  /**
   * {@code CLIENT SETNAME|GETNAME|ID|SETINFO}, answered for this connection as redis does; other
   * subcommands concern the server's own clients and are refused.
   */
  private byte[] client(Request request) {
    String sub = RespTokens.text(request, 1).toUpperCase(Locale.ROOT);
    int args = request.tokenCount();
    switch (sub) {
      case "SETNAME" -> {
        if (args != 3) {
          return RespReplies.error("wrong number of arguments for 'client|setname' command");
        }
        byte[] name = RespTokens.bytes(request, 2);
        if (!validClientName(name)) {
          return RespReplies.error(BAD_CLIENT_NAME);
        }
        clientName = name.length == 0 ? null : name;
        return RespReplies.OK;
      }
      case "GETNAME" -> {
        if (clientName == null) {
          return resp3() ? RespReplies.NULL : RespReplies.NIL;
        }
        return RespReplies.bulk(clientName, 0, clientName.length);
      }
      case "ID" -> {
        return RespReplies.integer(clientId);
      }
      case "SETINFO" -> {
        if (args != 4) {
          return RespReplies.error("wrong number of arguments for 'client|setinfo' command");
        }
        String attribute = RespTokens.text(request, 2);
        if (!attribute.equalsIgnoreCase("LIB-NAME") && !attribute.equalsIgnoreCase("LIB-VER")) {
          return RespReplies.error("Unrecognized option '" + attribute + "'");
        }
        return RespReplies.OK;
      }
      default -> {
        return RespReplies.error(
            "CLIENT "
                + RespTokens.text(request, 1)
                + " is not supported by the middleware (only SETNAME, GETNAME, ID and SETINFO,"
                + " answered for this connection)");
      }
    }
  }

  /** redis' rule: printable ASCII without spaces. */
  private static boolean validClientName(byte[] name) {
    for (byte b : name) {
      if (b < '!' || b > '~') {
        return false;
      }
    }
    return true;
  }

  /**
   * {@code SELECT 0} is answered {@code +OK} (every server is used with database 0, as twemproxy
   * uses them); another index gets redis' out-of-range error, a non-number its integer error.
   */
  private static void select(Request request) {
    long index = RespTokens.number(request, 1);
    if (index == Long.MIN_VALUE) {
      request.setRejected(
          Status.REJECT, RespReplies.error("value is not an integer or out of range"));
    } else if (index != 0) {
      request.setRejected(Status.REJECT, RespReplies.error("DB index is out of range"));
    } else {
      request.setLocalResp(Status.LOCAL, RespCommand.SELECT, RespReplies.OK);
    }
  }
}
