//go:build !linux

package confine

func kernelABI() int { return 0 }
