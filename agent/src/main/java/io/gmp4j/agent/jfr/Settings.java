package io.gmp4j.agent.jfr;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.text.ParseException;
import jdk.jfr.Configuration;

/**
 * The JFR settings of {@code jfr.settings} and {@code flightrecorder.settings}: {@code default}
 * is the shipped gmp4j.jfc, {@code detail} the shipped gmp4j-detail.jfc, anything else a .jfc
 * file. The shipped files are the JDK's default.jfc plus gmp4j's events (agent/pom.xml merges
 * them at build time with {@code jfr configure}), read from the agent jar's root.
 */
final class Settings {
  static final String DEFAULT_JFC = "gmp4j.jfc";
  static final String DETAIL_JFC = "gmp4j-detail.jfc";

  private Settings() {}

  /**
   * The configuration that {@code value} names. Throws IOException whose message is the rest
   * of a one-line error ("cannot read ..."), or ParseException for a malformed file. Any thread.
   */
  static Configuration resolve(String value) throws IOException, ParseException {
    String resource =
        switch (value) {
          case "default" -> DEFAULT_JFC;
          case "detail" -> DETAIL_JFC;
          default -> null;
        };
    if (resource == null) {
      try {
        return Configuration.create(Path.of(value));
      } catch (IOException e) {
        throw new IOException("cannot read the settings file " + value + ": " + describe(e), e);
      }
    }
    try (InputStream in = Settings.class.getResourceAsStream("/" + resource)) {
      if (in == null) {
        throw new IOException(
            "the agent jar has no "
                + resource
                + " (a broken build: agent/pom.xml generates it in process-classes)");
      }
      return Configuration.create(new InputStreamReader(in, StandardCharsets.UTF_8));
    }
  }

  /** The exception as {@code Class: message}, on one line. */
  static String describe(Throwable t) {
    String msg =
        t.getMessage() == null
            ? t.getClass().getName()
            : t.getClass().getSimpleName() + ": " + t.getMessage();
    return msg.replace('\r', ' ').replace('\n', ' ');
  }
}
