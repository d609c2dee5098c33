// SPDX-License-Identifier: MIT
//
// The few helpers the peers suite's programs share: a check that reports
// and counts instead of aborting (so one run says everything that is
// wrong), and the key=value lines through which a program tells
// tests/peers/check-report.py what it saw, to be set against rtde-sim's
// own report.
#pragma once

#include <cstdio>
#include <string>

namespace peer
{
inline int failures = 0;

// Reports @what as "ok" or "not ok"; counts the failures for exit_status().
inline bool check(bool ok, const std::string &what)
{
	std::printf("%s - %s\n", ok ? "ok" : "not ok", what.c_str());
	std::fflush(stdout);
	if (!ok)
		failures++;
	return ok;
}

// One observation for the report checker: "key=value" on a line of its own.
template <typename T> inline void fact(const char *key, const T &value)
{
	std::printf("%s=%s\n", key, std::to_string(value).c_str());
}

// Doubles with every digit, so the report check can hold them to 1e-9.
inline void fact(const char *key, double value)
{
	std::printf("%s=%.17g\n", key, value);
}

inline void fact(const char *key, const std::string &value)
{
	std::printf("%s=%s\n", key, value.c_str());
}

inline int exit_status()
{
	std::printf("# %d failed\n", failures);
	return failures ? 1 : 0;
}
} // namespace peer
