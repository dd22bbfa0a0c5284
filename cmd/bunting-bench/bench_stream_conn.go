package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"
)

// streamConn is the benchmark's side of a streaming connection: a minimal
// WebSocket client (RFC 6455: the upgrade, masked frames out, frames in,
// pings answered) that holds little, so ten thousand fit beside the server.
type streamConn struct {
	c   net.Conn
	br  *bufio.Reader
	wmu sync.Mutex
}

// WebSocket opcodes.
const (
	opContinuation = 0
	opText         = 1
	opClose        = 8
	opPing         = 9
	opPong         = 10
)

func dialStream(ctx context.Context, host, path string, source net.IP) (*streamConn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: source}, Timeout: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	var key [16]byte
	rand.Read(key[:])
	c.SetDeadline(time.Now().Add(30 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key[:]) + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 1024)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, fmt.Errorf("upgrade answered %s", resp.Status)
	}
	c.SetDeadline(time.Time{})
	return &streamConn{c: c, br: br}, nil
}

// write sends one masked frame.
func (s *streamConn) write(op byte, p []byte) error {
	buf := make([]byte, 0, 14+len(p))
	buf = append(buf, 0x80|op)
	switch n := len(p); {
	case n < 126:
		buf = append(buf, 0x80|byte(n))
	case n < 1<<16:
		buf = append(buf, 0x80|126, byte(n>>8), byte(n))
	default:
		buf = append(buf, 0x80|127)
		buf = binary.BigEndian.AppendUint64(buf, uint64(n))
	}
	var mask [4]byte
	binary.LittleEndian.PutUint32(mask[:], mrand.Uint32())
	buf = append(buf, mask[:]...)
	for i, b := range p {
		buf = append(buf, b^mask[i%4])
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := s.c.Write(buf)
	return err
}

// next reads the next data message, answering pings on the way. It keeps
// at most keep bytes of it (reading and dropping the rest) and returns its
// whole length too.
func (s *streamConn) next(keep int) ([]byte, int, error) {
	var msg []byte
	total := 0
	for {
		var h [2]byte
		if _, err := io.ReadFull(s.br, h[:]); err != nil {
			return nil, 0, err
		}
		fin, op, n := h[0]&0x80 != 0, h[0]&0x0f, uint64(h[1]&0x7f)
		if h[1]&0x80 != 0 {
			return nil, 0, errors.New("the server masked a frame")
		}
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(s.br, b[:]); err != nil {
				return nil, 0, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(s.br, b[:]); err != nil {
				return nil, 0, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if op >= opClose {
			p := make([]byte, n)
			if _, err := io.ReadFull(s.br, p); err != nil {
				return nil, 0, err
			}
			switch op {
			case opPing:
				if err := s.write(opPong, p); err != nil {
					return nil, 0, err
				}
			case opClose:
				code := 1005
				if len(p) >= 2 {
					code = int(binary.BigEndian.Uint16(p))
				}
				return nil, 0, fmt.Errorf("closed by the server: %d %s", code, p[min(2, len(p)):])
			}
			continue
		}
		if op != opText && op != opContinuation {
			return nil, 0, fmt.Errorf("unexpected frame opcode %d", op)
		}
		take := min(int(n), max(0, keep-len(msg)))
		start := len(msg)
		msg = append(msg, make([]byte, take)...)
		if _, err := io.ReadFull(s.br, msg[start:]); err != nil {
			return nil, 0, err
		}
		if err := discard(s.br, int(n)-take); err != nil {
			return nil, 0, err
		}
		total += int(n)
		if fin {
			return msg, total, nil
		}
	}
}

// scratch buffers read what is dropped in large reads (bufio's Discard
// would read it a kilobyte at a time).
var scratch = sync.Pool{New: func() any { return new([64 << 10]byte) }}

func discard(r io.Reader, n int) error {
	buf := scratch.Get().(*[64 << 10]byte)
	defer scratch.Put(buf)
	for n > 0 {
		m, err := io.ReadFull(r, buf[:min(n, len(buf))])
		if err != nil {
			return err
		}
		n -= m
	}
	return nil
}

// close sends a normal close and closes the socket without waiting.
func (s *streamConn) close() {
	s.wmu.Lock()
	s.c.SetWriteDeadline(time.Now().Add(time.Second))
	s.c.Write([]byte{0x80 | opClose, 0x80 | 2, 0, 0, 0, 0, 0x03, 0xe8})
	s.wmu.Unlock()
	s.c.Close()
}
