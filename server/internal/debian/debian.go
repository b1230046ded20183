// Package debian lets tests use a Debian-packaged tool (chromium, tshark):
// found on PATH, or installed with apt-get when the test runs as root, or
// else the test is skipped with a loud message naming the package.
package debian

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Tool returns the path of bin, installing the Debian package pkg (apt-get
// update, then apt-get install) when it is missing and the test runs as
// root. Only when that is impossible or fails does it skip t, saying which
// package is needed and why it could not be installed.
func Tool(t testing.TB, bin, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	var why string
	if _, err := exec.LookPath("apt-get"); err != nil {
		why = "apt-get is not available"
	} else if os.Geteuid() != 0 {
		why = "not root, so apt-get cannot install it"
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", pkg}} {
			// Tests of other packages may be installing at the same time:
			// wait for dpkg's lock rather than fail on it.
			cmd := exec.CommandContext(ctx, "apt-get", append([]string{"-o", "DPkg::Lock::Timeout=300"}, args...)...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				if len(out) > 800 {
					out = out[len(out)-800:]
				}
				why = fmt.Sprintf("apt-get %s failed: %v\n%s", strings.Join(args, " "), err, out)
				break
			}
		}
		if p, err := exec.LookPath(bin); err == nil {
			return p
		}
		if why == "" {
			why = "apt-get install succeeded but " + bin + " is still not on PATH"
		}
	}
	t.Skipf("\n\n*** SKIPPED: this test needs %s from the Debian package %q, which could not be installed: %s ***\n*** Install it with: apt-get install %s ***\n", bin, pkg, why, pkg)
	return ""
}
