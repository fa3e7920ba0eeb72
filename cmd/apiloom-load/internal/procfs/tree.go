package procfs

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// ReadTree samples process pid together with all its descendants. Its
// CPU counts, besides each live process's own time, the time of children
// that have already exited (cutime+cstime, which the kernel adds to a
// parent when it reaps a child), so that a connection's backend that ends
// between two samples is not lost; RSS is that of the live processes.
func ReadTree(pid int) (Sample, error) {
	stats := map[int]Stat{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return Sample{}, err
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if errors.Is(err, fs.ErrNotExist) {
			continue // exited while we looked
		}
		if err != nil {
			return Sample{}, err
		}
		st, err := ParseStat(b)
		if err != nil {
			return Sample{}, err
		}
		stats[p] = st
	}
	if _, ok := stats[pid]; !ok {
		return Sample{}, fs.ErrNotExist
	}
	var sum Sample
	for _, p := range Descendants(stats, pid) {
		sum.CPU += stats[p].CPU + stats[p].ChildrenCPU
		status, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Sample{}, err
		}
		rss, err := ParseStatusRSS(status)
		if err != nil && p == pid {
			return Sample{}, err
		}
		// A descendant without VmRSS is a zombie: it holds no memory.
		sum.RSSKiB += rss
	}
	return sum, nil
}

// Descendants returns root and every process below it in stats (by PPID),
// root first.
func Descendants(stats map[int]Stat, root int) []int {
	children := map[int][]int{}
	for p, st := range stats {
		if p != root {
			children[st.PPID] = append(children[st.PPID], p)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
