package server

import (
	"net/http"

	toolenv "github.com/toolenv/toolenv"
)

// httpStatus maps a Result status to the HTTP status REST clients get.
var httpStatus = map[toolenv.Status]int{
	toolenv.StatusOK:               http.StatusOK,
	toolenv.StatusInvalidArguments: http.StatusBadRequest,
	toolenv.StatusUnknownTool:      http.StatusNotFound,
	toolenv.StatusNotFound:         http.StatusNotFound,
	toolenv.StatusUnauthorized:     http.StatusUnauthorized,
	toolenv.StatusRateLimited:      http.StatusTooManyRequests,
	toolenv.StatusTimeout:          http.StatusGatewayTimeout,
	toolenv.StatusUpstreamError:    http.StatusBadGateway,
	toolenv.StatusUnavailable:      http.StatusServiceUnavailable,
	toolenv.StatusGone:             http.StatusGone,
	toolenv.StatusBadRequest:       http.StatusBadRequest,
	toolenv.StatusTooLarge:         http.StatusRequestEntityTooLarge,
	toolenv.StatusCanceled:         499, // client closed request (nginx's code)
	toolenv.StatusInternal:         http.StatusInternalServerError,
}

// HTTPStatus returns the HTTP status for a Result status (500 for an
// unknown one).
func HTTPStatus(s toolenv.Status) int {
	if code, ok := httpStatus[s]; ok {
		return code
	}
	return http.StatusInternalServerError
}

// stbError maps statuses to the exact error strings StableToolBench's
// client (rapidapi.py) turns into its status codes 6–10, so an unmodified
// client classifies toolenv's failures as it classified RapidAPI's.
var stbError = map[toolenv.Status]string{
	toolenv.StatusNotFound:     "API not working error...",   // code 6
	toolenv.StatusGone:         "API not working error...",   // code 6
	toolenv.StatusUnavailable:  "API not working error...",   // code 6
	toolenv.StatusUnauthorized: "Unauthorized error...",      // code 7
	toolenv.StatusRateLimited:  "Too many requests error...", // code 9
}

// STBCode is the status code StableToolBench's client assigns to a
// /virtual answer with the given error string: 6 not working, 7
// unauthorized, 8 unsubscribed, 9 too many requests, 10 rate limit per
// minute, 11 message error, 0 otherwise (including API-level errors).
func STBCode(errMsg string) int {
	switch errMsg {
	case "API not working error...":
		return 6
	case "Unauthorized error...":
		return 7
	case "Unsubscribed error...":
		return 8
	case "Too many requests error...":
		return 9
	case "Rate limit per minute error...":
		return 10
	case "Message error...":
		return 11
	}
	return 0
}
