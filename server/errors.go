package server

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ccscope/ccscope/engine/config"
)

// Code is a protocol error code (proto/README.md, "Errors").
type Code string

// The error codes of protocol version 1.
const (
	CodeBadRequest     Code = "bad_request"
	CodeUnknownOp      Code = "unknown_op"
	CodeBadArgs        Code = "bad_args"
	CodeInvalidConfig  Code = "invalid_config"
	CodeNotFound       Code = "not_found"
	CodeLimit          Code = "limit"
	CodeTooLarge       Code = "too_large"
	CodeBusy           Code = "busy"
	CodeReplayMismatch Code = "replay_mismatch"
	CodeVersion        Code = "version"
	CodeInternal       Code = "internal"
)

// Error is an error response's body. Path names the argument or scenario
// field at fault, when there is one.
type Error struct {
	Code    Code          `msgpack:"code"`
	Message string        `msgpack:"message"`
	Path    string        `msgpack:"path,omitempty"`
	Details []ErrorDetail `msgpack:"details,omitempty"`
}

// ErrorDetail is one problem of an invalid_config error.
type ErrorDetail struct {
	Path   string `msgpack:"path"`
	Reason string `msgpack:"reason"`
}

// Error returns "server: code: message (path)".
func (e *Error) Error() string {
	s := "server: " + string(e.Code) + ": " + e.Message
	if e.Path != "" {
		s += " (at " + e.Path + ")"
	}
	return s
}

func errorf(code Code, path, format string, args ...any) *Error {
	return &Error{Code: code, Path: text(path), Message: text(fmt.Sprintf(format, args...))}
}

// configError turns a config package error into invalid_config, keeping
// every path; prefix is prepended to each path (e.g. "set.").
func configError(err error, prefix string) *Error {
	var ce *config.Errors
	if !errors.As(err, &ce) || len(ce.List) == 0 {
		return &Error{Code: CodeInvalidConfig, Message: text(err.Error())}
	}
	e := &Error{Code: CodeInvalidConfig}
	var msgs []string
	for _, fe := range ce.List {
		p, reason := text(fe.Path), text(fe.Reason)
		if p != "" && prefix != "" {
			p = prefix + p
		}
		e.Details = append(e.Details, ErrorDetail{Path: p, Reason: reason})
		if p == "" {
			msgs = append(msgs, reason)
		} else {
			msgs = append(msgs, p+": "+reason)
		}
	}
	e.Path = e.Details[0].Path
	e.Message = strings.Join(msgs, "; ")
	return e
}

// text is s with each byte that is not UTF-8 written as \xNN. Paths and
// messages quote what a client sent (a set key, an argument name), and an
// error whose msgpack str is not UTF-8 is one a client may not read at all:
// Python's msgpack refuses it.
func text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
