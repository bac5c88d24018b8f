package goplugin_test

func fakeHost(mode string) int { return 2 }
