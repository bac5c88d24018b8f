package lab_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"yolop.dev/transport/lab"
)

// TestValidate: out-of-range concurrency and sizes and unknown transports
// are refused as an *OptionError naming the field, by Validate and by Run
// before anything starts; the defaults and every real transport pass.
func TestValidate(t *testing.T) {
	if err := (lab.Options{}).Validate(); err != nil {
		t.Fatalf("zero options: %v", err)
	}
	if err := (lab.Options{Transports: lab.All[1:], Concurrency: []int{1, 1024}, Sizes: []int{1, 64 << 20}}).Validate(); err != nil {
		t.Fatalf("the bounds: %v", err)
	}
	for _, tc := range []struct {
		o     lab.Options
		field string
		msg   string
	}{
		{lab.Options{Concurrency: []int{8, 0}}, "Concurrency", "0 is out of range: 1 to 1024 callers"},
		{lab.Options{Concurrency: []int{1025}}, "Concurrency", "1025 is out of range"},
		{lab.Options{Sizes: []int{64<<20 + 1}}, "Sizes", "out of range: 1 byte to 64MiB"},
		{lab.Options{Transports: []string{lab.Stdio, "carrier-pigeon"}}, "Transports", `no transport "carrier-pigeon"; want some of stdio, `},
		{lab.Options{Transports: []string{lab.Floor}}, "Transports", `no transport "floor"`},
	} {
		err := tc.o.Validate()
		var oe *lab.OptionError
		if !errors.As(err, &oe) || oe.Field != tc.field || !strings.Contains(oe.Err.Error(), tc.msg) {
			t.Errorf("Validate(%+v) = %v; want %s: %s", tc.o, err, tc.field, tc.msg)
		}
		tc.o.Exe = "/nonexistent/yolop"
		if _, err := lab.Run(context.Background(), tc.o); !errors.As(err, &oe) {
			t.Errorf("Run(%+v) = %v; want an *OptionError", tc.o, err)
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := lab.ParseSizes([]string{"64", "2KiB"})
	if err != nil || len(got) != 2 || got[0] != 64 || got[1] != 2048 {
		t.Fatalf("ParseSizes = %v, %v", got, err)
	}
	if _, err := lab.ParseSizes([]string{"1KiB", "1GiB"}); err == nil || !strings.Contains(err.Error(), `"1GiB"`) {
		t.Fatalf("ParseSizes with 1GiB: %v", err)
	}
}
