// Package release tests what `make release` makes: it builds the
// linux/amd64 .deb with scripts/release.sh, unpacks it into an empty
// directory tree with dpkg -x, and runs the corral inside.
package release

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestDebInstallsAStampedCorral(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release (-short)")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the release test builds and runs the linux/amd64 package")
	}
	for _, tool := range []string{"dpkg", "git", "sha256sum", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed", tool)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	const version = "v9.8.7-test.1"
	cmd := exec.Command(filepath.Join(root, "scripts", "release.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TARGETS=linux/amd64", "PACKAGERS=deb", "DIST="+dist, "VERSION="+version)
	if _, err := os.Stat(filepath.Join(root, "internal", "web", "dist", "index.html")); err == nil {
		cmd.Env = append(cmd.Env, "SKIP_WEB=1") // built already (make test builds it first)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, out)
	}
	commit, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}

	debs, _ := filepath.Glob(filepath.Join(dist, "corral_9.8.7~test.1_amd64.deb"))
	if len(debs) != 1 {
		entries, _ := os.ReadDir(dist)
		t.Fatalf("no .deb of version 9.8.7~test.1 in %v", entries)
	}
	sums := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	sums.Dir = dist
	if out, err := sums.CombinedOutput(); err != nil || !strings.Contains(string(out), filepath.Base(debs[0])+": OK") {
		t.Errorf("SHA256SUMS: %v\n%s", err, out)
	}

	tree := t.TempDir()
	if out, err := exec.Command("dpkg", "-x", debs[0], tree).CombinedOutput(); err != nil {
		t.Fatalf("dpkg -x: %v\n%s", err, out)
	}
	for _, f := range []string{
		"usr/bin/corral", "usr/bin/corral-hook",
		"usr/share/bash-completion/completions/corral", "usr/share/zsh/vendor-completions/_corral",
		"usr/share/fish/vendor_completions.d/corral.fish",
		"usr/lib/systemd/user/corral-serve.service", "usr/lib/systemd/system/corral-hub.service",
		"usr/lib/sysusers.d/corral.conf", "usr/share/doc/corral/README.md", "usr/share/doc/corral/operations.md",
	} {
		if fi, err := os.Stat(filepath.Join(tree, f)); err != nil || fi.Size() == 0 {
			t.Errorf("the package lacks %s: %v", f, err)
		}
	}
	for _, bin := range []string{"corral", "corral-hook"} {
		if interp := interpreter(t, filepath.Join(tree, "usr/bin", bin)); interp != "" {
			t.Errorf("%s is not static: it wants %s", bin, interp)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(tree, "usr/share/bash-completion/completions/corral")); !bytes.Contains(b, []byte("__start_corral")) {
		t.Errorf("the bash completion is not cobra's:\n%.300s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(tree, "usr/lib/systemd/system/corral-hub.service")); !bytes.Contains(b, []byte("ExecStart=/usr/bin/corral hub --data-dir=/var/lib/corral\n")) {
		t.Errorf("the packaged hub unit:\n%s", b)
	}
	// The web UI is inside: embed keeps its files as they are.
	if index, err := os.ReadFile(filepath.Join(root, "internal", "web", "dist", "index.html")); err == nil {
		bin, _ := os.ReadFile(filepath.Join(tree, "usr/bin/corral"))
		if !bytes.Contains(bin, index) {
			t.Error("the packaged corral does not embed the web UI's index.html")
		}
	}

	// corral version, from the unpacked tree, with a data directory of its
	// own so that no daemon of this machine answers.
	run := exec.Command(filepath.Join(tree, "usr/bin/corral"), "version", "--json")
	run.Env = []string{"HOME=" + t.TempDir(), "CORRAL_HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	out, err := run.Output()
	if err != nil {
		t.Fatalf("corral version: %v\n%s", err, out)
	}
	var v struct {
		Version, Commit, Date, OS, Arch string
		Daemon                          any
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if v.Version != version || v.Commit != strings.TrimSpace(string(commit)) || len(v.Date) != len("2006-01-02T15:04:05Z") ||
		v.OS != "linux" || v.Arch != "amd64" || v.Daemon != nil {
		t.Errorf("corral version --json from the package = %s", out)
	}
	text, _ := exec.Command(filepath.Join(tree, "usr/bin/corral"), "--data-dir", t.TempDir(), "version").Output()
	if !strings.HasPrefix(string(text), "corral "+version+" (commit "+strings.TrimSpace(string(commit))[:12]+", ") {
		t.Errorf("corral version from the package = %q", text)
	}
}

// interpreter returns the ELF's dynamic loader, "" for a static binary.
func interpreter(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			p.ReadAt(b, 0)
			return strings.TrimRight(string(b), "\x00")
		}
	}
	return ""
}

// TestEveryTargetBuilds cross-compiles what make release builds for the
// other targets, so that Linux-only code cannot break the release unseen.
func TestEveryTargetBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles (-short)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"darwin/arm64", "darwin/amd64", "linux/arm64"} {
		goos, goarch, _ := strings.Cut(target, "/")
		cmd := exec.Command("go", "build", "-o", t.TempDir()+"/", "./cmd/corral", "./cmd/corral-hook")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", target, err, out)
		}
	}
}
