package doctest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// snapshot is what the copy of the checkout held before the blocks ran.
type snapshot struct {
	files map[string]fileState // file → its content hash, size and time
	dirs  map[string]bool      // top-level folders of the checkout
}

// fileState is a copied file's content hash, and the size and
// modification time of the copy: a file whose size and time are
// unchanged was not written (check hashes only the others, rather than
// the whole checkout after every block).
type fileState struct {
	sum  [32]byte
	size int64
	mod  time.Time
}

// skipDirs are never copied: the repository, build output, caches.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "out": true, "tmp": true, "bin": true, ".toolenv": true, "fuzz-results": true}

// checkoutFiles lists the checkout's files: git's tracked and untracked
// but not ignored files, or a walk of the folder where git cannot tell.
func checkoutFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 {
				files = append(files, string(f))
			}
		}
		return files, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if skipDirs[d.Name()] && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, err
}

// copyTree copies the checkout's files into dst, as a reader has them
// after cloning, and returns what it copied.
func copyTree(root, dst string) (*snapshot, error) {
	files, err := checkoutFiles(root)
	if err != nil {
		return nil, err
	}
	s := &snapshot{files: map[string]fileState{}, dirs: map[string]bool{}}
	for _, rel := range files {
		src := filepath.Join(root, filepath.FromSlash(rel))
		st, err := os.Lstat(src)
		if err != nil {
			continue // deleted in the working tree
		}
		if st.IsDir() {
			continue
		}
		if top, _, ok := strings.Cut(rel, "/"); ok {
			s.dirs[top] = true
		}
		to := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			if err := copySymlink(src, to); err != nil {
				return nil, err
			}
			continue
		}
		h, err := copyFile(src, to, st.Mode().Perm())
		if err != nil {
			return nil, err
		}
		cst, err := os.Lstat(to)
		if err != nil {
			return nil, err
		}
		s.files[filepath.ToSlash(rel)] = fileState{sum: h, size: cst.Size(), mod: cst.ModTime()}
	}
	return s, nil
}

// Checkout is one copy of the checkout that the runs of a test share:
// each run's folder is made of hard links to its files, rather than a
// copy of every byte of the checkout per page (on two cores, the twenty
// pages' copies cost about 15 s of CPU, mostly the kernel's). A block that
// writes a file of the checkout in place would change it for every run
// that links it; the check after each block reports any such change as
// the block's failure, as it does for a copy (a file replaced by a new
// one, as sed -i or an editor does, breaks the link and changes nothing
// else).
type Checkout struct {
	dir   string
	snap  *snapshot
	dirs  []string // every folder of the copy, parents first
	files []string // every file of the copy
	links []string // every symlink of the copy
	// hardLink links a file (os.Link; a test makes it fail, as between
	// file systems)
	hardLink func(oldname, newname string) error
}

// NewCheckout copies the checkout at root into dir (created, and left for
// the caller to remove) once.
func NewCheckout(root, dir string) (*Checkout, error) {
	snap, err := copyTree(root, dir)
	if err != nil {
		return nil, err
	}
	c := &Checkout{dir: dir, snap: snap, hardLink: os.Link}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		switch {
		case d.IsDir():
			c.dirs = append(c.dirs, rel)
		case d.Type()&fs.ModeSymlink != 0:
			c.links = append(c.links, rel)
		default:
			c.files = append(c.files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// link makes dst a copy of the checkout of hard links to c's files (a
// symlink is made anew), or copies them where dst lies on another file
// system.
func (c *Checkout) link(dst string) (*snapshot, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	for _, d := range c.dirs {
		if err := os.Mkdir(filepath.Join(dst, d), 0o755); err != nil {
			return nil, err
		}
	}
	files := c.snap.files // shared by the runs, read only; cloned before a change
	cloned := false
	for _, l := range c.links {
		if err := copySymlink(filepath.Join(c.dir, l), filepath.Join(dst, l)); err != nil {
			return nil, err
		}
	}
	for _, f := range c.files {
		src, to := filepath.Join(c.dir, f), filepath.Join(dst, f)
		if err := c.hardLink(src, to); err == nil {
			continue
		}
		st, err := os.Stat(src)
		if err != nil {
			return nil, err
		}
		if _, err := copyFile(src, to, st.Mode().Perm()); err != nil {
			return nil, err
		}
		// a copy's size and time are its own: record them, so that check
		// does not take the file for written (the content it is checked
		// against stays the checkout's)
		cst, err := os.Lstat(to)
		if err != nil {
			return nil, err
		}
		if !cloned {
			files, cloned = maps.Clone(files), true
		}
		rel := filepath.ToSlash(f)
		files[rel] = fileState{sum: files[rel].sum, size: cst.Size(), mod: cst.ModTime()}
	}
	return &snapshot{files: files, dirs: c.snap.dirs}, nil
}

// copySymlink makes dst a symlink to what src points at.
func copySymlink(src, dst string) error {
	target, err := os.Readlink(src)
	if err != nil {
		return err
	}
	return os.Symlink(target, dst)
}

func copyFile(src, dst string, perm fs.FileMode) ([32]byte, error) {
	var sum [32]byte
	in, err := os.Open(src)
	if err != nil {
		return sum, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return sum, err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		out.Close()
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, out.Close()
}

func hashFile(p string) ([32]byte, error) {
	var sum [32]byte
	f, err := os.Open(p)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// check fails when the blocks changed a file of the checkout or left a
// new one inside its folders (a fuzz corpus entry under testdata/ breaks
// the next go test): what a reader's commands write belongs in new
// folders or files at the top (out/, runs/, map.db).
func (s *snapshot) check(dir string) error {
	var changed []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		top, _, nested := strings.Cut(rel, "/")
		if d.IsDir() {
			if !nested && !s.dirs[top] {
				return filepath.SkipDir // the reader's own folder
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		want, known := s.files[rel]
		switch {
		case !known && nested:
			changed = append(changed, rel+" (new)")
		case known:
			if info, err := d.Info(); err == nil && info.Size() == want.size && info.ModTime().Equal(want.mod) {
				return nil // not written since it was copied
			}
			got, err := hashFile(p)
			if err != nil {
				return err
			}
			if got != want.sum {
				changed = append(changed, rel+" (changed)")
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for rel := range s.files {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); os.IsNotExist(err) {
			changed = append(changed, rel+" (removed)")
		}
	}
	if len(changed) == 0 {
		return nil
	}
	sort.Strings(changed)
	if len(changed) > 10 {
		changed = append(changed[:10], fmt.Sprintf("… and %d more", len(changed)-10))
	}
	return fmt.Errorf("the block left the checkout changed, which a reader's next `go test` or `git status` would meet: %s", strings.Join(changed, ", "))
}
