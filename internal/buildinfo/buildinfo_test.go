package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
)

// TestExecutable: the identity is the SHA-256 of the running program's
// file, the same on every call.
func TestExecutable(t *testing.T) {
	got, err := Executable()
	if err != nil {
		t.Fatal(err)
	}
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Executable() = %s, the program's file hashes to %s", got, want)
	}
	if again, _ := Executable(); again != got {
		t.Errorf("a second call gives %s, the first %s", again, got)
	}
}
