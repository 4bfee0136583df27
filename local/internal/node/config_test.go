package node

import "testing"

func TestParseMemTotal(t *testing.T) {
	mem, err := parseMemTotal([]byte("MemTotal:       24576000 kB\nMemFree: 1 kB\n"))
	if err != nil || mem != 24576000*1024 {
		t.Errorf("MemTotal = %d, %v", mem, err)
	}
}
