package confine

// ForgetInitForTesting makes this process look as if it never called
// Init, until the returned function restores it.
func ForgetInitForTesting() (restore func()) {
	prev := initCalled.Swap(false)
	return func() { initCalled.Store(prev) }
}
