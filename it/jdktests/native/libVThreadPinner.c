/*
 * gmp4j's own stand-in for the native library that OpenJDK's test/lib VThreadPinner loads
 * (System.mapLibraryName("VThreadPinner") on java.library.path, symbol "call"): call(f) calls
 * f, so that the task VThreadPinner.runPinned runs has a native frame under it, and the virtual
 * thread is pinned. The runner builds it with cc when the test tree brings no native libraries
 * (a source checkout has none: OpenJDK builds them with its own make).
 */
void call(void (*f)(void)) { f(); }
