// Package procfs reads the two figures apiloom-load needs about a server
// process from Linux's /proc: CPU time consumed (utime+stime from
// /proc/PID/stat) and resident memory (VmRSS from /proc/PID/status). The
// parsers take the file contents so that they are tested without /proc.
package procfs
