package confine

import ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

func kernelABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}
