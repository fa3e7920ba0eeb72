package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat. Linux fixes it at
// 100 for user space on every architecture Go supports (USER_HZ), whatever
// the kernel's internal tick rate.
const userHZ = 100

// ErrFormat reports a /proc file that does not look as expected.
var ErrFormat = errors.New("procfs: unexpected format")

// Sample is one reading of a process.
type Sample struct {
	// CPU is user plus system time consumed since the process started.
	CPU time.Duration
	// RSSKiB is the resident set size in KiB.
	RSSKiB int64
}

// Read samples process pid (0 means this process).
func Read(pid int) (Sample, error) {
	dir := "/proc/self"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid)
	}
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return Sample{}, err
	}
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return Sample{}, err
	}
	cpu, err := ParseStatCPU(stat)
	if err != nil {
		return Sample{}, fmt.Errorf("%s/stat: %w", dir, err)
	}
	rss, err := ParseStatusRSS(status)
	if err != nil {
		return Sample{}, fmt.Errorf("%s/status: %w", dir, err)
	}
	return Sample{CPU: cpu, RSSKiB: rss}, nil
}

// ParseStatCPU returns utime+stime from the contents of /proc/PID/stat.
// The command name (field 2) is in parentheses and may itself contain
// spaces or parentheses, so fields are counted from the last ')'.
func ParseStatCPU(stat []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("%w: no command name", ErrFormat)
	}
	// After ")": field 3 (state) onwards; utime is field 14, stime 15.
	fields := strings.Fields(string(stat[end+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("%w: %d fields after the command name", ErrFormat, len(fields))
	}
	u, err := strconv.ParseUint(fields[utime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: utime: %v", ErrFormat, err)
	}
	s, err := strconv.ParseUint(fields[stime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: stime: %v", ErrFormat, err)
	}
	return time.Duration(u+s) * time.Second / userHZ, nil
}

// ParseStatusRSS returns VmRSS in KiB from the contents of
// /proc/PID/status.
func ParseStatusRSS(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%w: VmRSS line %q", ErrFormat, sc.Text())
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("%w: no VmRSS line", ErrFormat)
}

// Group samples several processes together: a server whose etcd runs in
// another process is measured as their sum.
type Group []int

// Read samples every process in g and returns the sum and each sample.
func (g Group) Read() (Sample, []Sample, error) {
	var sum Sample
	each := make([]Sample, 0, len(g))
	for _, pid := range g {
		s, err := Read(pid)
		if err != nil {
			return Sample{}, nil, err
		}
		sum.CPU += s.CPU
		sum.RSSKiB += s.RSSKiB
		each = append(each, s)
	}
	return sum, each, nil
}
