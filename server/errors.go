package server

import (
	"errors"
	"fmt"
	"strings"

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
	return &Error{Code: code, Path: path, Message: fmt.Sprintf(format, args...)}
}

// configError turns a config package error into invalid_config, keeping
// every path; prefix is prepended to each path (e.g. "set.").
func configError(err error, prefix string) *Error {
	var ce *config.Errors
	if !errors.As(err, &ce) || len(ce.List) == 0 {
		return &Error{Code: CodeInvalidConfig, Message: err.Error()}
	}
	e := &Error{Code: CodeInvalidConfig}
	var msgs []string
	for _, fe := range ce.List {
		p := fe.Path
		if p != "" && prefix != "" {
			p = prefix + p
		}
		e.Details = append(e.Details, ErrorDetail{Path: p, Reason: fe.Reason})
		if p == "" {
			msgs = append(msgs, fe.Reason)
		} else {
			msgs = append(msgs, p+": "+fe.Reason)
		}
	}
	e.Path = e.Details[0].Path
	e.Message = strings.Join(msgs, "; ")
	return e
}
