package dev.cachelab.middleware.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RespConnectionStateTest {
  /** A request framed as {@code tokens}, named and counted as the framer leaves it. */
  private static Request request(String... tokens) {
    Request request = new Request();
    byte[] line = String.join(" ", tokens).getBytes(StandardCharsets.ISO_8859_1);
    request.copyRaw(line, 0, line.length);
    int at = 0;
    for (String token : tokens) {
      request.addToken(at, at + token.length());
      at += token.length() + 1;
    }
    return request;
  }

  private static String answered(RespConnectionState connection, RespCommand command, Request r) {
    assertThat(connection.answer(command, r)).isTrue();
    return ParserHarness.describe(r);
  }

  @Test
  void leavesCommandsAboutDataToTheFramer() {
    RespConnectionState connection = new RespConnectionState();
    Request get = request("GET", "k");
    assertThat(connection.answer(RespCommand.GET, get)).isFalse();
    assertThat(get.status()).isNull();
    Request info = request("INFO");
    assertThat(connection.answer(RespCommand.INFO, info)).isFalse();
  }

  @Test
  void helloThreeSwitchesTheConnectionToResp3AndNamesIt() {
    RespConnectionState connection = new RespConnectionState();
    assertThat(connection.resp3()).isFalse();
    assertThat(answered(connection, RespCommand.HELLO, request("HELLO", "3", "SETNAME", "app")))
        .startsWith("LOCAL %7");
    assertThat(connection.resp3()).isTrue();
    assertThat(answered(connection, RespCommand.CLIENT, request("CLIENT", "GETNAME")))
        .isEqualTo("LOCAL $3\r\napp");
  }

  @Test
  void aRefusedHelloChangesNothing() {
    RespConnectionState connection = new RespConnectionState();
    assertThat(answered(connection, RespCommand.HELLO, request("HELLO", "3", "SETNAME", "a\tb")))
        .startsWith("REJECT -ERR Client names cannot contain");
    assertThat(connection.resp3()).isFalse();
    assertThat(answered(connection, RespCommand.CLIENT, request("CLIENT", "GETNAME")))
        .isEqualTo("LOCAL $-1");
  }

  @Test
  void eachConnectionKeepsItsOwnStateAndId() {
    RespConnectionState first = new RespConnectionState();
    RespConnectionState second = new RespConnectionState();
    answered(first, RespCommand.HELLO, request("HELLO", "3"));
    assertThat(second.resp3()).isFalse();
    assertThat(answered(first, RespCommand.CLIENT, request("CLIENT", "ID")))
        .isNotEqualTo(answered(second, RespCommand.CLIENT, request("CLIENT", "ID")));
  }

  @Test
  void selectAnswersDatabaseZeroOnly() {
    RespConnectionState connection = new RespConnectionState();
    assertThat(answered(connection, RespCommand.SELECT, request("SELECT", "0")))
        .isEqualTo("LOCAL +OK");
    assertThat(answered(connection, RespCommand.SELECT, request("SELECT", "1")))
        .isEqualTo("REJECT -ERR DB index is out of range");
    assertThat(answered(connection, RespCommand.SELECT, request("SELECT", "01")))
        .isEqualTo("REJECT -ERR value is not an integer or out of range");
  }

  @Test
  void pingEchoAndQuitAreAnsweredHere() {
    RespConnectionState connection = new RespConnectionState();
    assertThat(answered(connection, RespCommand.PING, request("PING"))).isEqualTo("LOCAL +PONG");
    assertThat(answered(connection, RespCommand.ECHO, request("ECHO", "hi")))
        .isEqualTo("LOCAL $2\r\nhi");
    assertThat(answered(connection, RespCommand.QUIT, request("QUIT"))).isEqualTo("QUIT +OK");
  }
}
