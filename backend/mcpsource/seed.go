package mcpsource

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// The bounds of an episode's initial files (toolenv.InitialState.Files).
const (
	MaxSeedFiles = 10000
	MaxSeedBytes = 256 << 20
)

// seedTree walks the folder src (an episode's initial files): it returns
// a digest of its names, modes and contents, and copies them into dst
// when dst is not "". Only regular files and folders are taken: a
// symbolic link or a device is an error naming it, as is a folder over
// MaxSeedFiles entries or MaxSeedBytes bytes.
func seedTree(src, dst string) (string, error) {
	h := sha256.New()
	if src == "" {
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	st, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("initial_state.files %s: %w (it names a folder whose contents seed each episode's folder)", src, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("initial_state.files %s is a file: name a folder (its contents are copied into each episode's folder)", src)
	}
	var files int
	var bytes int64
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if files++; files > MaxSeedFiles {
			return fmt.Errorf("more than %d files and folders", MaxSeedFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode()
		slash := filepath.ToSlash(rel)
		switch {
		case mode.IsDir():
			fmt.Fprintf(h, "d %s\n", strconv.Quote(slash))
			if dst != "" {
				return os.MkdirAll(filepath.Join(dst, rel), mode.Perm()|0o700)
			}
			return nil
		case mode.IsRegular():
			if bytes += info.Size(); bytes > MaxSeedBytes {
				return fmt.Errorf("more than %d bytes", MaxSeedBytes)
			}
			fmt.Fprintf(h, "f %s %o %d\n", strconv.Quote(slash), mode.Perm(), info.Size())
			return copyFile(path, dst, rel, mode.Perm(), h)
		default:
			return fmt.Errorf("%s is not a regular file or a folder (%s): copy the file itself", slash, mode.Type())
		}
	})
	if err != nil {
		return "", fmt.Errorf("initial_state.files %s: %w", src, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyFile hashes the file at path into h, and copies it to dst/rel
// when dst is not "".
func copyFile(path, dst, rel string, perm fs.FileMode, h io.Writer) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	w := h
	var out *os.File
	if dst != "" {
		out, err = os.OpenFile(filepath.Join(dst, rel), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm|0o600)
		if err != nil {
			return err
		}
		w = io.MultiWriter(h, out)
	}
	_, err = io.Copy(w, in)
	if out != nil {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
