/**
 * {@code gmp4j trace}: {@code go tool trace} for JFR recordings of gmp4j's events. Internal and
 * unstable: the one entry point is {@link io.gmp4j.agent.trace.TraceCommand}, called by the
 * {@code trace} verb; everything else is package-private.
 *
 * <p>The pipeline, one class a step: {@code TraceReader} (the JDK's RecordingFile into {@code
 * TraceData}, sorted records of gmp4j's events), {@code Analysis} (Go's goroutine analysis and
 * scheduler-latency profile: see 'Goroutine time' there), then one writer per output: {@code
 * SummaryFormat} (text and JSON), {@code Check} (the CI limits), {@code Perfetto} ('Proc lanes'),
 * {@code HtmlReport} ('Report page'). {@code JsonWriter} is the one JSON writer of them all.
 *
 * <p>Conventions: times are nanoseconds since the epoch, as JFR's Instants, until a writer turns
 * them into its own unit; a file the verbs cannot read is a {@code TraceReader.BadFile}, whose
 * message is the one {@code gmp4j: } line printed; nothing here runs in the application's JVM.
 */
package io.gmp4j.agent.trace;
