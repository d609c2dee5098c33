// SPDX-License-Identifier: MIT
/*
 * The parts of the Robot API client that need no HTTP (see
 * <rtloop/ur_robot_api.h>): the configuration's defaults and the bounded
 * JSON scanner, built in every librtloop, with or without libcurl, because
 * rtde-sim's Robot API (apps/rtde-sim/robot_api.c) reads its requests with
 * the same scanner.
 *
 * No JSON library: every reply the client reads is a small flat object and
 * it needs one string member of it ("mode", "state", "marketingVersion",
 * "message"). A bounded scanner over the outer object (strings with their
 * escapes, nested values skipped by depth) is a hundred lines, has no
 * allocation, and keeps a dependency out of every consumer's link line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <rtloop/ur_robot_api.h>

RTL_API void rtl_ur_robot_api_config_init(struct rtl_ur_robot_api_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->port = RTL_UR_ROBOT_API_PORT;
	cfg->connect_timeout_ns = 3000000000LL;
	cfg->timeout_ns = 5000000000LL;
}

/* ---- the bounded JSON scanner ----------------------------------------------------------- */

struct scan {
	const char *p, *end;
};

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* A string at s->p (the opening quote); its value into @out (NULL: skip).
 * Returns the length, -EPROTO, or -EMSGSIZE when it does not fit. */
static int scan_string(struct scan *s, char *out, size_t cap)
{
	size_t n = 0;
	bool too_long = false;

	if (s->p >= s->end || *s->p != '"')
		return -EPROTO;
	s->p++;
	while (s->p < s->end && *s->p != '"') {
		char c = *s->p++;

		if ((unsigned char)c < 0x20)
			return -EPROTO;
		if (c == '\\') {
			if (s->p >= s->end)
				return -EPROTO;
			c = *s->p++;
			switch (c) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
			case 'f':
				c = ' ';
				break;
			case 'u':
				/* Four hex digits; anything beyond ASCII becomes '?'. */
				if (s->end - s->p < 4)
					return -EPROTO;
				{
					unsigned code = 0;

					for (int i = 0; i < 4; i++) {
						char h = s->p[i];

						if (!isxdigit((unsigned char)h))
							return -EPROTO;
						code = code * 16 +
						       (unsigned)(isdigit((unsigned char)h)
									  ? h - '0'
									  : tolower((unsigned char)
											    h) -
										    'a' + 10);
					}
					c = code < 0x80 ? (char)code : '?';
				}
				s->p += 4;
				break;
			case '"':
			case '\\':
			case '/':
				break;
			default:
				return -EPROTO;
			}
		}
		if (out) {
			if (n + 1 < cap)
				out[n] = c;
			else
				too_long = true;
		}
		n++;
	}
	if (s->p >= s->end)
		return -EPROTO;
	s->p++;
	if (out && cap)
		out[n < cap ? n : cap - 1] = '\0';
	return too_long ? -EMSGSIZE : (int)n;
}

/* Skip one value (string, number, literal, object or array). */
static int skip_value(struct scan *s)
{
	int depth = 0;

	skip_ws(s);
	if (s->p < s->end && *s->p == '"')
		return scan_string(s, NULL, 0) < 0 ? -EPROTO : 0;
	while (s->p < s->end) {
		char c = *s->p;

		if (c == '"') {
			if (scan_string(s, NULL, 0) < 0)
				return -EPROTO;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return 0;
			depth--;
		} else if (c == ',' && depth == 0) {
			return 0;
		}
		s->p++;
		if (depth == 0 && (c == '}' || c == ']'))
			return 0;
	}
	return depth ? -EPROTO : 0;
}

RTL_API int rtl_ur_robot_api_json_string(char *out, size_t cap, const char *body, size_t len,
					 const char *key)
{
	struct scan s = { body, body + len };
	char name[64];

	if (!body || !key || !out || !cap)
		return -EPROTO;
	skip_ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return -EPROTO;
	s.p++;
	for (;;) {
		int n;

		skip_ws(&s);
		if (s.p < s.end && *s.p == '}')
			return -EPROTO;
		n = scan_string(&s, name, sizeof(name));
		if (n == -EPROTO)
			return -EPROTO;
		skip_ws(&s);
		if (s.p >= s.end || *s.p != ':')
			return -EPROTO;
		s.p++;
		skip_ws(&s);
		if (n >= 0 && !strcmp(name, key) && s.p < s.end && *s.p == '"')
			return scan_string(&s, out, cap);
		if (skip_value(&s))
			return -EPROTO;
		skip_ws(&s);
		if (s.p >= s.end || *s.p != ',')
			return -EPROTO;
		s.p++;
	}
}
