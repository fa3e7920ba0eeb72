package procfs

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	stat := []byte("4242 (postgres: kine) S 77 4242 4242 0 -1 4194560 2000 0 0 0 250 75 30 20 20 0 12 0 100 1000000 2000\n")
	got, err := ParseStat(stat)
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PPID: 77, CPU: 3250 * time.Millisecond, ChildrenCPU: 500 * time.Millisecond}
	if got != want {
		t.Fatalf("ParseStat = %+v, want %+v", got, want)
	}
	if _, err := ParseStat([]byte("1 (x) S -1 1 1 0 -1 0 0 0 0 0 1 1 1 1")); err == nil {
		t.Error("negative ppid accepted")
	}
}

func TestDescendants(t *testing.T) {
	stats := map[int]Stat{1: {PPID: 0}, 10: {PPID: 1}, 11: {PPID: 10}, 12: {PPID: 10}, 13: {PPID: 12}, 20: {PPID: 1}}
	got := Descendants(stats, 10)
	slices.Sort(got[1:])
	if want := []int{10, 11, 12, 13}; !slices.Equal(got, want) {
		t.Fatalf("Descendants(10) = %v, want %v", got, want)
	}
}

// TestReadTreeCountsChildren checks ReadTree on this process: a child
// that is running adds its memory, and one that has exited and been
// waited for still counts by its CPU.
func TestReadTreeCountsChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	self := os.Getpid()
	before, err := ReadTree(self)
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU in a child and reap it.
	busy := exec.Command("sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done")
	if err := busy.Run(); err != nil {
		t.Fatal(err)
	}
	own, err := Read(self)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ReadTree(self)
	if err != nil {
		t.Fatal(err)
	}
	childCPU := busy.ProcessState.UserTime() + busy.ProcessState.SystemTime()
	if after.CPU-before.CPU < childCPU/2 || after.CPU < own.CPU+childCPU/2 {
		t.Fatalf("tree CPU %v → %v (own %v) does not count the reaped child's %v", before.CPU, after.CPU, own.CPU, childCPU)
	}

	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	child, err := Read(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	own, err = Read(self)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := ReadTree(self)
	if err != nil {
		t.Fatal(err)
	}
	// Our own RSS may move a little between the reads; the child's is
	// what must be there.
	if tree.RSSKiB < own.RSSKiB*9/10+child.RSSKiB {
		t.Fatalf("tree RSS %d KiB < own %d + sleeping child %d", tree.RSSKiB, own.RSSKiB, child.RSSKiB)
	}
}
