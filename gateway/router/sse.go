package router

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxSSELine bounds one server-sent-events line.
const maxSSELine = 1 << 20

// sseReader reads the data of server-sent events, one event at a time.
// Comment lines and fields other than data are ignored; multi-line data is
// joined with "\n" as the SSE spec says.
type sseReader struct {
	sc   *bufio.Scanner
	data bytes.Buffer
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxSSELine)
	return &sseReader{sc: sc}
}

// errSSELine: a line over maxSSELine.
var errSSELine = errors.New("sse: line too long")

// next returns the data of the next event, or io.EOF at a clean end. An
// event cut off by EOF (no blank line) is returned as io.ErrUnexpectedEOF.
func (s *sseReader) next() ([]byte, error) {
	s.data.Reset()
	have := false
	for s.sc.Scan() {
		line := s.sc.Bytes()
		if len(line) == 0 {
			if have {
				return s.data.Bytes(), nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if string(field) != "data" {
			continue
		}
		if have {
			s.data.WriteByte('\n')
		}
		s.data.Write(value)
		have = true
	}
	err := s.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return nil, errSSELine
	}
	if err != nil {
		return nil, err
	}
	if have {
		return s.data.Bytes(), io.ErrUnexpectedEOF
	}
	return nil, io.EOF
}
