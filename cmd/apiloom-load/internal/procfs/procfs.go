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
func ParseStatCPU(stat []byte) (time.Duration, error) {
	st, err := ParseStat(stat)
	return st.CPU, err
}

// Stat is what apiloom-load reads from /proc/PID/stat.
type Stat struct {
	PPID int
	// CPU is the process's own user plus system time; ChildrenCPU that of
	// its children that have exited and been waited for (cutime+cstime).
	CPU, ChildrenCPU time.Duration
}

// ParseStat parses the contents of /proc/PID/stat. The command name
// (field 2) is in parentheses and may itself contain spaces or
// parentheses, so fields are counted from the last ')'.
func ParseStat(stat []byte) (Stat, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return Stat{}, fmt.Errorf("%w: no command name", ErrFormat)
	}
	// After ")": field 3 (state) onwards; ppid is field 4, utime 14,
	// stime 15, cutime 16, cstime 17.
	fields := strings.Fields(string(stat[end+1:]))
	const ppid, utime, stime, cutime, cstime = 4 - 3, 14 - 3, 15 - 3, 16 - 3, 17 - 3
	if len(fields) <= cstime {
		return Stat{}, fmt.Errorf("%w: %d fields after the command name", ErrFormat, len(fields))
	}
	var v [cstime + 1]int64
	for _, i := range []int{ppid, utime, stime, cutime, cstime} {
		n, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil || n < 0 {
			return Stat{}, fmt.Errorf("%w: field %d: %q", ErrFormat, i+3, fields[i])
		}
		v[i] = n
	}
	tick := func(n int64) time.Duration { return time.Duration(n) * time.Second / userHZ }
	return Stat{PPID: int(v[ppid]), CPU: tick(v[utime] + v[stime]), ChildrenCPU: tick(v[cutime] + v[cstime])}, nil
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

// Member is one entry of a Group: a process alone, or (Tree) a process
// with all its descendants, such as a PostgreSQL postmaster and the
// backend it forks for each connection.
type Member struct {
	PID  int
	Tree bool
}

// Group samples several processes together: a server whose etcd runs in
// another process is measured as their sum.
type Group []Member

// Read samples every member of g and returns the sum and each sample.
func (g Group) Read() (Sample, []Sample, error) {
	var sum Sample
	each := make([]Sample, 0, len(g))
	for _, m := range g {
		read := Read
		if m.Tree {
			read = ReadTree
		}
		s, err := read(m.PID)
		if err != nil {
			return Sample{}, nil, err
		}
		sum.CPU += s.CPU
		sum.RSSKiB += s.RSSKiB
		each = append(each, s)
	}
	return sum, each, nil
}
