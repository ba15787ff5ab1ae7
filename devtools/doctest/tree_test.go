package doctest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testCheckout copies testdata/root once into tmp/copy.
func testCheckout(t *testing.T) (co *Checkout, root, tmp string) {
	t.Helper()
	root, err := filepath.Abs("testdata/root")
	if err != nil {
		t.Fatal(err)
	}
	tmp = t.TempDir()
	co, err = NewCheckout(root, filepath.Join(tmp, "copy"))
	if err != nil {
		t.Fatal(err)
	}
	return co, root, tmp
}

// TestCheckoutLinks: the runs' folders linked from one copy hold the
// checkout's files (the same files, not copies of them), pass the check
// while untouched, and a file written in place fails the check in every
// folder that shares it, while one replaced by a new file fails only in
// its own.
func TestCheckoutLinks(t *testing.T) {
	co, root, tmp := testCheckout(t)
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	snapA, err := co.link(a)
	if err != nil {
		t.Fatal(err)
	}
	snapB, err := co.link(b)
	if err != nil {
		t.Fatal(err)
	}
	const greeting = "examples/greeting.txt"
	for _, dir := range []string{a, b} {
		want, err := os.ReadFile(filepath.Join(root, greeting))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, greeting))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: %q, %v; want the checkout's %q", dir, got, err, want)
		}
	}
	ia, _ := os.Stat(filepath.Join(a, greeting))
	ib, _ := os.Stat(filepath.Join(b, greeting))
	if !os.SameFile(ia, ib) {
		t.Errorf("the two folders hold copies of %s, not links to one file", greeting)
	}
	if len(snapA.files) == 0 || len(snapA.files) != len(snapB.files) {
		t.Fatalf("snapshots of %d and %d files", len(snapA.files), len(snapB.files))
	}
	for _, c := range []struct {
		dir  string
		snap *snapshot
	}{{a, snapA}, {b, snapB}} {
		if err := c.snap.check(c.dir); err != nil {
			t.Fatalf("untouched folder: %v", err)
		}
	}

	// replaced by a new file (as sed -i does): only a is changed
	tmpFile := filepath.Join(a, "examples", ".new")
	if err := os.WriteFile(tmpFile, []byte("Xello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmpFile, filepath.Join(a, greeting)); err != nil {
		t.Fatal(err)
	}
	if err := snapA.check(a); err == nil || !strings.Contains(err.Error(), greeting+" (changed)") {
		t.Errorf("a, its file replaced: %v, want %s (changed)", err, greeting)
	}
	if err := snapB.check(b); err != nil {
		t.Errorf("b, untouched while a's file was replaced: %v", err)
	}

	// written in place through b's link: b, and every later folder, is changed
	f, err := os.OpenFile(filepath.Join(b, greeting), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("J"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := snapB.check(b); err == nil || !strings.Contains(err.Error(), greeting+" (changed)") {
		t.Errorf("b, its file written in place: %v, want %s (changed)", err, greeting)
	}
	c := filepath.Join(tmp, "c")
	snapC, err := co.link(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := snapC.check(c); err == nil || !strings.Contains(err.Error(), greeting+" (changed)") {
		t.Errorf("a folder linked after a write in place: %v, want %s (changed)", err, greeting)
	}
}

// TestCheckoutCopiesWhereLinksFail: where a file cannot be linked (another
// file system), it is copied, and the check holds it to the checkout's
// content, not to the copy's own time.
func TestCheckoutCopiesWhereLinksFail(t *testing.T) {
	co, _, tmp := testCheckout(t)
	co.hardLink = func(string, string) error { return errors.New("invalid cross-device link") }
	dir := filepath.Join(tmp, "a")
	snap, err := co.link(dir)
	if err != nil {
		t.Fatal(err)
	}
	const greeting = "examples/greeting.txt"
	ic, _ := os.Stat(filepath.Join(tmp, "copy", greeting))
	ia, _ := os.Stat(filepath.Join(dir, greeting))
	if os.SameFile(ic, ia) {
		t.Fatal("linked, though linking fails")
	}
	if err := snap.check(dir); err != nil {
		t.Fatalf("untouched copy: %v", err)
	}
	if co.snap.files[greeting].mod != ic.ModTime() {
		t.Error("the shared snapshot was changed by one run's copy")
	}
	if err := os.WriteFile(filepath.Join(dir, greeting), []byte("Jello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := snap.check(dir); err == nil || !strings.Contains(err.Error(), greeting+" (changed)") {
		t.Errorf("copy written: %v, want %s (changed)", err, greeting)
	}
}

// TestRunLinkedCheckout: a page run in a folder linked from a shared copy
// passes and fails as one run in a copy of its own.
func TestRunLinkedCheckout(t *testing.T) {
	besidePages(t)
	opts := fixtureOptions(t)
	co, err := NewCheckout(opts.Root, filepath.Join(t.TempDir(), "copy"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Checkout = co
	if _, err := runFixture(t, "pass.md", opts); err != nil {
		t.Fatalf("pass.md: %v", err)
	}
	for file, want := range map[string]string{
		"changed.md":  "examples/greeting.txt (changed)",
		"leftover.md": "server/testdata/fuzz/FuzzX/abc (new)",
	} {
		if _, err := runFixture(t, file, opts); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a failure naming %s", file, err, want)
		}
	}
}

// TestCheckoutKeepsSymlinks: a symlink of the checkout is a symlink, to
// the same target, in every linked folder.
func TestCheckoutKeepsSymlinks(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	co, err := NewCheckout(root, filepath.Join(tmp, "copy"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "a")
	snap, err := co.link(dir)
	if err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "l")); err != nil || target != "a.txt" {
		t.Errorf("l: %q, %v; want a symlink to a.txt", target, err)
	}
	if err := snap.check(dir); err != nil {
		t.Errorf("untouched folder: %v", err)
	}
}
