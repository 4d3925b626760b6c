package io.gmp4j.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.servers.LoadClient;
import example.servers.ServerProcess;
import example.servers.SpringBench;
import example.servers.SpringServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A Spring Boot 4 web app on Tomcat with {@code spring.threads.virtual.enabled=true} ({@link
 * SpringServer}, issue 17) starts under the agent with {@code -Xverify:all}, serves its requests
 * on gmp4j's Ms, and its light requests get through while CPU requests outnumber the carriers.
 *
 * <p>The load begins with a burst: 16 requests at once to the cold app, as a restarted service
 * behind a load balancer gets them. Their Gs load the same classes at once, pinned (class loading
 * is a JVM upcall) and waiting for each other's class loader locks. (A harness that did the same
 * with {@code asyncpreemptoff=1}, without {@code -Xverify:all}, deadlocked in about one start in
 * four until a G whose carrier is blocked lost its P with the hand-off off too: 'Blocked
 * carriers, with the hand-off off' in HogHandoff. Here it never did in ten runs of the agent
 * before the fix, so the deterministic test of it is BlockedCarrierHandoffTest.)
 *
 * <p>{@code -Dspring.bench} instead runs {@link SpringBench}: rounds of the JDK, the agent and
 * the agent with {@code asyncpreemptoff=1}, and prints the table of BENCHMARKS.md ({@code
 * -Dspring.bench.rounds}, default 3; {@code -Dspring.bench.baseline=jar} adds that agent jar as a
 * fourth mode, to measure a change to the agent against the agent before it; {@code
 * -Dspring.bench.steady=N} adds a phase once the JIT has settled, {@link SpringBench#STEADY}).
 */
@Timeout(900)
class SpringBootIT {
  private static final boolean BENCH =
      !System.getProperty("spring.bench", "").isEmpty()
          && !System.getProperty("spring.bench").equals("false");

  @Test
  void springBootServesOnGmp4jUnderVerifyAll() throws Exception {
    String agent = ChildJvm.javaagent("").substring("-javaagent:".length());
    if (BENCH) {
      String baseline = System.getProperty("spring.bench.baseline", "");
      List<SpringBench.Run> runs =
          SpringBench.run(
              agent,
              Integer.getInteger("spring.bench.rounds", 3),
              baseline.isEmpty() ? null : baseline);
      System.out.println(SpringBench.table(runs));
      return;
    }
    try (ServerProcess p = new ServerProcess(SpringServer.class, agent, List.of(), 120);
        LoadClient client = new LoadClient("127.0.0.1", p.port())) {
      LoadClient.Result light = client.closed(16, 1_000, Duration.ofSeconds(60), 0); // the burst
      assertEquals(0, light.lightFailed(), light + "\n" + p.output());
      assertEquals(1_000, light.lightOk(), light + "\n" + p.output());
      String body = Scrape.get("http://127.0.0.1:" + p.port() + "/light");
      assertTrue(
          body.contains("\"ok\":true")
              && body.contains("VirtualThread[")
              && body.contains("@gmp-m"),
          body + "\n" + p.output());
      LoadClient.Result beside = client.closed(4, 200, Duration.ofSeconds(10), 4);
      assertEquals(0, beside.lightFailed() + beside.cpuFailed(), beside + "\n" + p.output());
      assertTrue(beside.lightOk() > 0 && beside.cpuOk() > 0, beside + "\n" + p.output());
      String out = p.output();
      assertTrue(
          !out.contains("gmp4j: could not")
              && !out.contains("not installed")
              && !out.contains("uninstrumented")
              && !out.contains("VerifyError"),
          out);
      System.out.println(
          "SpringBootIT: start-up "
              + SpringBench.startupMsOf(out)
              + " ms under -Xverify:all; light "
              + light
              + "; beside CPU "
              + beside);
    }
  }
}
