package dev.cachelab.middleware.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.protocol.Request;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PerThreadRouterTest {
  private static final List<String> THREE =
      List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211");

  @Test
  void threadsRoutingAtOnceEachUseTheirOwnRouterAndAgreeWithOne() throws Exception {
    HashRouter single = new HashRouter(THREE, 1);
    int[] expected = new int[200];
    for (int k = 0; k < expected.length; k++) {
      Request request = RouterTest.parse("get key" + k + "\r\n");
      single.route(request);
      expected[k] = request.server(0);
    }
    AtomicInteger made = new AtomicInteger();
    PerThreadRouter router =
        new PerThreadRouter(
            () -> {
              made.incrementAndGet();
              return new HashRouter(THREE, 1);
            });
    List<String> wrong = new CopyOnWriteArrayList<>();
    Thread[] threads = new Thread[4];
    for (int t = 0; t < threads.length; t++) {
      threads[t] =
          new Thread(
              () -> {
                for (int round = 0; round < 20; round++) {
                  for (int k = 0; k < expected.length; k++) {
                    Request request = RouterTest.parse("get key" + k + "\r\n");
                    router.route(request);
                    if (request.server(0) != expected[k]) {
                      wrong.add("key" + k + " on " + request.server(0));
                    }
                  }
                }
              });
      threads[t].start();
    }
    for (Thread thread : threads) {
      thread.join(30_000);
    }
    assertThat(wrong).isEmpty();
    assertThat(made.get()).isEqualTo(threads.length);
  }
}
