package io.gmp4j.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A scrape of the agent's {@code /metrics}: its samples by series ({@code name{labels}}, as
 * written) and the metric names it holds. ExporterIT checks the text format with an independent
 * parser; the tests that only read values (ServersIT, GrafanaDashboardIT) use this.
 */
record Scrape(String text, Map<String, Double> samples) {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})?\\s+(\\S+)");

  /** GETs {@code url} (status 200 expected) and parses it. */
  static Scrape of(String url) throws Exception {
    return parse(get(url));
  }

  static String get(String url) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException(url + ": status " + r.statusCode() + "\n" + r.body());
    }
    return r.body();
  }

  static Scrape parse(String text) {
    Map<String, Double> samples = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (!line.startsWith("#") && m.find()) {
        samples.put(
            m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
      }
    }
    return new Scrape(text, samples);
  }

  /** The value of series {@code series} ({@code name} or {@code name{labels}}), or NaN. */
  double value(String series) {
    return samples.getOrDefault(series, Double.NaN);
  }

  /** Every metric name with a sample. */
  Set<String> names() {
    Set<String> names = new TreeSet<>();
    for (String s : samples.keySet()) {
      int brace = s.indexOf('{');
      names.add(brace < 0 ? s : s.substring(0, brace));
    }
    return names;
  }
}
