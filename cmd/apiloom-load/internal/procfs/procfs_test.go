package procfs

import (
	"errors"
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	stat := []byte("4242 (api loom) x) S 1 4242 4242 0 -1 4194560 2000 0 0 0 250 75 0 0 20 0 12 0 100 1000000 2000 18446744073709551615\n")
	got, err := ParseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Fatalf("ParseStatCPU = %v, want %v (325 ticks)", got, want)
	}
	for _, bad := range []string{"no parens at all", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 u s"} {
		if _, err := ParseStatCPU([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseStatCPU(%q) err = %v, want ErrFormat", bad, err)
		}
	}
}

func TestParseStatusRSS(t *testing.T) {
	status := []byte("Name:\tapiloom\nVmPeak:\t  900 kB\nVmRSS:\t  123456 kB\nThreads:\t12\n")
	got, err := ParseStatusRSS(status)
	if err != nil || got != 123456 {
		t.Fatalf("ParseStatusRSS = %d, %v", got, err)
	}
	if _, err := ParseStatusRSS([]byte("Name:\tx\n")); !errors.Is(err, ErrFormat) {
		t.Fatalf("missing VmRSS: err = %v", err)
	}
	if _, err := ParseStatusRSS([]byte("VmRSS:\t12 MB\n")); !errors.Is(err, ErrFormat) {
		t.Fatalf("odd unit: err = %v", err)
	}
}

func TestReadSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	s, err := Read(0)
	if err != nil {
		t.Fatal(err)
	}
	if s.RSSKiB <= 0 {
		t.Fatalf("RSS of this process = %d KiB", s.RSSKiB)
	}
	sum, each, err := Group{{PID: os.Getpid()}, {PID: os.Getpid(), Tree: true}}.Read()
	if err != nil || len(each) != 2 || sum.RSSKiB < each[0].RSSKiB {
		t.Fatalf("Group.Read = %+v %+v %v", sum, each, err)
	}
}
