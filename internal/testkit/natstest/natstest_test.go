package natstest

import (
	"net"
	"testing"
)

// TestStartStop: a server answers on loopback, and after Stop nothing
// listens there.
func TestStartStop(t *testing.T) {
	s := Start(t)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := c.Read(buf); err != nil || string(buf) != "INFO" {
		t.Fatalf("greeting %q %v", buf, err)
	}
	c.Close()
	s.Stop()
	if c, err := net.Dial("tcp", s.Addr()); err == nil {
		c.Close()
		t.Fatal("still listening after Stop")
	}
}
