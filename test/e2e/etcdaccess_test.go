package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TestServerListensOnlyOnItsAPIPort: a server on the embedded etcd opens
// one TCP listener, the API's own port. etcd's client port and its peer
// port are not on TCP at all, so no local user can reach them over the
// network stack.
func TestServerListensOnlyOnItsAPIPort(t *testing.T) {
	before := listeners(t)
	ts, _ := startServer(t)
	after := listeners(t)

	var added []listener
	for inode, l := range after {
		if _, ok := before[inode]; !ok {
			added = append(added, l)
		}
	}
	_, apiPort, _ := net.SplitHostPort(ts.Server.Address())
	var tcp []listener
	for _, l := range added {
		if l.network == "tcp" {
			tcp = append(tcp, l)
		}
	}
	if len(tcp) != 1 || tcp[0].port() != apiPort {
		t.Fatalf("the server listens on TCP %v, want only its API port %s", tcp, apiPort)
	}
}

// TestEtcdUnreachableByOtherUsers runs, as uid/gid 65534 (nobody), a probe
// against every listener the server opened other than its API port: none
// may answer an etcd request. As a control, the same probe run as this
// user reaches the embedded etcd. It needs root to switch users (CI runs
// as root).
func TestEtcdUnreachableByOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a probe as another user")
	}
	probe := probeBinary(t)
	before := listeners(t)
	ts, _ := startServer(t)
	_, apiPort, _ := net.SplitHostPort(ts.Server.Address())

	var endpoints []string
	for inode, l := range listeners(t) {
		if _, ok := before[inode]; ok || (l.network == "tcp" && l.port() == apiPort) {
			continue
		}
		endpoints = append(endpoints, l.endpoint())
	}
	if len(endpoints) == 0 {
		t.Fatal("the server opened no listener besides its API port; where is its etcd?")
	}
	reachedAsSelf := false
	for _, ep := range endpoints {
		if out, err := runProbe(t, probe, ep, nil); err == nil {
			reachedAsSelf = true
		} else {
			t.Logf("probe of %s as this user: %v\n%s", ep, err, out)
		}
		nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
		if out, err := runProbe(t, probe, ep, nobody); err == nil {
			t.Errorf("uid 65534 reached etcd at %s:\n%s", ep, out)
		} else {
			t.Logf("probe of %s as uid 65534 failed, as it must: %v\n%s", ep, err, out)
		}
	}
	if !reachedAsSelf {
		t.Fatalf("the probe reached no etcd at %v even as this user, so its failures as another user prove nothing", endpoints)
	}
}

// probeEnv names the endpoint TestEtcdProbe probes in a child process.
const probeEnv = "APILOOM_E2E_ETCD_PROBE"

// TestEtcdProbe is the child side of TestEtcdUnreachableByOtherUsers: it
// succeeds only if an etcd at $APILOOM_E2E_ETCD_PROBE answers a read.
func TestEtcdProbe(t *testing.T) {
	ep := os.Getenv(probeEnv)
	if ep == "" {
		t.Skip("child process of TestEtcdUnreachableByOtherUsers")
	}
	if path, ok := strings.CutPrefix(ep, "unix://"); ok {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatalf("dial %s: %v", path, err)
		}
		_ = c.Close()
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("read from %s: %v", ep, err)
	}
	t.Logf("read %d keys from %s", resp.Count, ep)
}

// runProbe runs TestEtcdProbe against ep in a child process, as cred's
// user when cred is set.
func runProbe(t *testing.T, bin, ep string, cred *syscall.Credential) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestEtcdProbe$", "-test.v", "-test.count=1")
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(os.Environ(), probeEnv+"="+ep, "HOME="+filepath.Dir(bin), "GOCOVERDIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// probeBinary copies this test binary where another user may run it (go
// test builds it in a private directory).
func probeBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "apiloom-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "probe")
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// listener is a listening socket of this process.
type listener struct {
	network string // "tcp" or "unix"
	addr    string // host:port, or the socket's path
}

func (l listener) port() string {
	_, port, _ := net.SplitHostPort(l.addr)
	return port
}

// endpoint is l as an etcd client endpoint.
func (l listener) endpoint() string {
	if l.network == "unix" {
		return "unix://" + l.addr
	}
	return "http://" + l.addr
}

func (l listener) String() string { return l.network + ":" + l.addr }

// listeners returns this process's listening TCP and unix sockets by
// inode, from /proc/self/fd and /proc/net/{tcp,tcp6,unix}.
func listeners(t *testing.T) map[string]listener {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); err == nil && ok {
			ours[strings.TrimSuffix(inode, "]")] = true
		}
	}
	found := map[string]listener{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, f := range procTable(t, file) {
			// sl local_address rem_address st ... uid timeout inode
			if len(f) < 10 || f[3] != "0A" || !ours[f[9]] { // 0A: LISTEN
				continue
			}
			found[f[9]] = listener{network: "tcp", addr: hexAddr(t, f[1])}
		}
	}
	for _, f := range procTable(t, "/proc/net/unix") {
		// Num RefCount Protocol Flags Type St Inode [Path]
		if len(f) < 8 || f[3] != "00010000" || !ours[f[6]] { // __SO_ACCEPTCON: listening
			continue
		}
		found[f[6]] = listener{network: "unix", addr: f[7]}
	}
	return found
}

// procTable returns the fields of each line of a /proc/net table but the
// header.
func procTable(t *testing.T, file string) [][]string {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil // no IPv6
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		rows = append(rows, strings.Fields(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// hexAddr decodes /proc/net/tcp's "0100007F:1F90" (IPv4 or IPv6, in host
// byte order per 32-bit word) into "127.0.0.1:8080".
func hexAddr(t *testing.T, s string) string {
	t.Helper()
	ipHex, portHex, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(portHex, 16, 16)
	if !ok || err != nil || len(ipHex)%8 != 0 {
		t.Fatalf("bad /proc/net address %q", s)
	}
	ip := make(net.IP, len(ipHex)/2)
	for w := 0; w < len(ipHex)/8; w++ {
		v, err := strconv.ParseUint(ipHex[w*8:w*8+8], 16, 32)
		if err != nil {
			t.Fatalf("bad /proc/net address %q", s)
		}
		// Each 32-bit word is in the machine's (little-endian) order.
		ip[w*4], ip[w*4+1], ip[w*4+2], ip[w*4+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(port))
}
