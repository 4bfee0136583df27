package pty

import (
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRawTerminal(t *testing.T) {
	master, slave, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = master.Close(), slave.Close() }()
	if err := MakeRaw(slave); err != nil {
		t.Fatal(err)
	}
	if err := SetSize(master, 40, 100); err != nil {
		t.Fatal(err)
	}
	var ws *unix.Winsize
	err = control(slave, func(fd int) error { ws, err = unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); return err })
	if err != nil || ws.Row != 40 || ws.Col != 100 {
		t.Errorf("slave's size = %+v, %v; want 40 rows, 100 columns", ws, err)
	}
	// Raw: Ctrl-C and a newline arrive as they are, with no echo back.
	if _, err := master.Write([]byte("a\x03\n")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3)
	if _, err := io.ReadFull(slave, got); err != nil || string(got) != "a\x03\n" {
		t.Errorf("slave read %q, %v; want %q", got, err, "a\x03\n")
	}
	if _, err := slave.Write([]byte("out\n")); err != nil {
		t.Fatal(err)
	}
	echo := make([]byte, 4)
	if _, err := io.ReadFull(master, echo); err != nil || string(echo) != "out\n" {
		t.Errorf("master read %q, %v; want %q (no echo, no CR added)", echo, err, "out\n")
	}
}
