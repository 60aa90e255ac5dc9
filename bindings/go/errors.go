package shoal

// #include <shoal.h>
import "C"

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrClosed is returned by every call on a Node after Close.
var ErrClosed = errors.New("shoal: node closed")

// ErrNotStarted is returned by calls that need a started node.
var ErrNotStarted = errors.New("shoal: node not started")

// Error is a failure the C library reported, with its reason.
type Error struct {
	Op     string // the call: "set", "start", "report", ...
	Reason string // the library's one-line reason
}

func (e *Error) Error() string {
	if e.Reason == "" {
		return "shoal: " + e.Op + " failed"
	}
	return "shoal: " + e.Op + ": " + e.Reason
}

// ResultCode says how the cluster answered a submit, rescale or remove.
type ResultCode int

// The result codes of shoal_result_code_t.
const (
	ResultOK        ResultCode = C.SHOAL_RESULT_OK
	ResultInvalid   ResultCode = C.SHOAL_RESULT_INVALID
	ResultNotFound  ResultCode = C.SHOAL_RESULT_NOT_FOUND
	ResultNoLeader  ResultCode = C.SHOAL_RESULT_NO_LEADER
	ResultTimedOut  ResultCode = C.SHOAL_RESULT_TIMED_OUT
	ResultPartial   ResultCode = C.SHOAL_RESULT_PARTIAL
	ResultFailed    ResultCode = C.SHOAL_RESULT_FAILED
	ResultCancelled ResultCode = C.SHOAL_RESULT_CANCELLED
)

func (c ResultCode) String() string {
	switch c {
	case ResultOK:
		return "ok"
	case ResultInvalid:
		return "invalid"
	case ResultNotFound:
		return "not found"
	case ResultNoLeader:
		return "no leader"
	case ResultTimedOut:
		return "timed out"
	case ResultPartial:
		return "partial"
	case ResultFailed:
		return "failed"
	case ResultCancelled:
		return "cancelled"
	}
	return fmt.Sprintf("result %d", int(c))
}

// ResultError is a submit, rescale or remove that did not succeed: the
// result code and the library's reason. When the call's context ended it,
// it wraps ctx.Err(), so errors.Is(err, context.Canceled) and
// errors.Is(err, context.DeadlineExceeded) hold.
type ResultError struct {
	Op     string
	Code   ResultCode
	Reason string
	ctxErr error
}

func (e *ResultError) Error() string {
	msg := "shoal: " + e.Op + ": " + e.Code.String()
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.ctxErr != nil {
		msg += " (" + e.ctxErr.Error() + ")"
	}
	return msg
}

// Unwrap gives the context's error when the context ended the call.
func (e *ResultError) Unwrap() error { return e.ctxErr }

// noNUL refuses text with a NUL byte: C would see it cut short there.
func noNUL(op string, texts ...string) error {
	for _, text := range texts {
		for i := 0; i < len(text); i++ {
			if text[i] == 0 {
				return &Error{Op: op, Reason: "text holds a NUL byte: " + strconv.Quote(text)}
			}
		}
	}
	return nil
}
