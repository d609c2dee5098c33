// SPDX-License-Identifier: MIT
/*
 * RTDE codec: every package layout of docs/rtde-protocol.md section 3, in
 * both protocol versions and both directions, and the value types of
 * section 4.
 *
 * Each decoder runs the same two gates before it looks at a payload:
 * rtl_rtde_package_type() checks the framing (at least a header, and a
 * declared size equal to the buffer length) and the caller's expected type
 * is compared with the type byte. After that the payload length alone is
 * trusted, and every read is bounded by it, so a decoder cannot read past
 * the buffer whatever the bytes say. Encoders compute the whole size first
 * (saturating, so absurd lengths cannot wrap), check it against the
 * protocol limit and the capacity, and only then write.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rtloop/rtde.h>
#include <rtloop/sized.h>

static const char *const type_names[RTL_RTDE_TYPE_COUNT] = {
	[RTL_RTDE_TYPE_BOOL] = "BOOL",
	[RTL_RTDE_TYPE_UINT8] = "UINT8",
	[RTL_RTDE_TYPE_UINT32] = "UINT32",
	[RTL_RTDE_TYPE_UINT64] = "UINT64",
	[RTL_RTDE_TYPE_INT32] = "INT32",
	[RTL_RTDE_TYPE_DOUBLE] = "DOUBLE",
	[RTL_RTDE_TYPE_VECTOR3D] = "VECTOR3D",
	[RTL_RTDE_TYPE_VECTOR6D] = "VECTOR6D",
	[RTL_RTDE_TYPE_VECTOR6INT32] = "VECTOR6INT32",
	[RTL_RTDE_TYPE_VECTOR6UINT32] = "VECTOR6UINT32",
	[RTL_RTDE_TYPE_NOT_FOUND] = "NOT_FOUND",
	[RTL_RTDE_TYPE_IN_USE] = "IN_USE"
};

/* ---- small helpers --------------------------------------------------- */

static bool proto_ok(enum rtl_rtde_protocol proto)
{
	return proto == RTL_RTDE_PROTOCOL_V1 || proto == RTL_RTDE_PROTOCOL_V2;
}

static bool dir_ok(enum rtl_rtde_dir dir)
{
	return dir == RTL_RTDE_FROM_CLIENT || dir == RTL_RTDE_FROM_CONTROLLER;
}

/* The one layout that is not "v2-like": protocol 1, controller to client.
 * Text messages then carry only level + message, data packages no id. */
static bool v1_from_controller(enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir)
{
	return proto == RTL_RTDE_PROTOCOL_V1 && dir == RTL_RTDE_FROM_CONTROLLER;
}

static size_t add_sat(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* A (pointer, length) pair a caller passed: NULL only when empty. */
static bool span_ok(const void *p, size_t len)
{
	return p != NULL || len == 0;
}

static void copy(uint8_t *dst, const void *src, size_t len)
{
	/* memcpy(NULL, 0) is undefined; empty strings may come as NULL. */
	if (len)
		memcpy(dst, src, len);
}

/*
 * Check framing and type of the package in @buf and return its payload.
 * -EINVAL first when @bad_args: the decoder's check of its own arguments,
 * made here so that each decoder starts with one call.
 */
static int open_pkg(bool bad_args, const uint8_t *buf, size_t len, int type,
		    const uint8_t **payload, size_t *plen)
{
	int t;

	if (bad_args)
		return -EINVAL;
	t = rtl_rtde_package_type(buf, len);
	if (t < 0)
		return t;
	if (t != type)
		return -EPROTO;
	*payload = buf + RTL_RTDE_HEADER_SIZE;
	*plen = len - RTL_RTDE_HEADER_SIZE;
	return 0;
}

/*
 * Start a package of @payload_len payload bytes: check the limits, write
 * the header. Returns the total size or -errno.
 */
static int begin_pkg(uint8_t *buf, size_t cap, int type, size_t payload_len)
{
	size_t total;

	if (!buf)
		return -EINVAL;
	if (payload_len > RTL_RTDE_MAX_PAYLOAD_SIZE)
		return -EMSGSIZE;
	total = payload_len + RTL_RTDE_HEADER_SIZE;
	if (cap < total)
		return -ENOSPC;
	rtl_rtde_store_u16(buf, (uint16_t)total);
	buf[2] = (uint8_t)type;
	return (int)total;
}

/* ---- types and lists --------------------------------------------------- */

RTL_API const char *rtl_rtde_type_name(enum rtl_rtde_type t)
{
	return RTL__NAME_OF(type_names, t, NULL);
}

RTL_API int rtl_rtde_type_from_name(const char *name, size_t len)
{
	if (!span_ok(name, len))
		return -EINVAL;
	for (int t = 0; t < RTL_RTDE_TYPE_COUNT; t++) {
		if (strlen(type_names[t]) == len && memcmp(type_names[t], name, len) == 0)
			return t;
	}
	return -EPROTO;
}

RTL_API bool rtl_rtde_list_next(struct rtl_rtde_list *it, const char **item, size_t *len)
{
	const char *comma;

	/* p == end after a comma: that comma was the trailing one. */
	if (it->done || it->p == it->end)
		return false;
	comma = memchr(it->p, ',', (size_t)(it->end - it->p));
	*item = it->p;
	if (comma) {
		*len = (size_t)(comma - it->p);
		it->p = comma + 1;
	} else {
		*len = (size_t)(it->end - it->p);
		it->p = it->end;
		it->done = true;
	}
	return true;
}

RTL_API int rtl_rtde_parse_types(enum rtl_rtde_type *types, size_t max, size_t *bad,
				 const char *list, size_t len)
{
	struct rtl_rtde_list it;
	const char *item;
	size_t item_len;
	size_t n = 0;
	int err;

	if (!span_ok(list, len) || !span_ok(types, max))
		return -EINVAL;
	rtl_rtde_list_init(&it, list, len);
	while (rtl_rtde_list_next(&it, &item, &item_len)) {
		int t;

		if (item_len == 0) {
			err = -EBADMSG;
			goto fail;
		}
		t = rtl_rtde_type_from_name(item, item_len);
		if (t < 0) {
			err = t;
			goto fail;
		}
		if (n == max) {
			err = -ENOSPC;
			goto fail;
		}
		types[n++] = (enum rtl_rtde_type)t;
	}
	return (int)n;

fail:
	if (bad)
		*bad = n;
	return err;
}

RTL_API int rtl_rtde_format_types(char *buf, size_t cap, const enum rtl_rtde_type *types, size_t n)
{
	size_t pos = 0;

	if (!span_ok(buf, cap) || !span_ok(types, n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const char *name = rtl_rtde_type_name(types[i]);
		size_t name_len;

		if (!name)
			return -EINVAL;
		name_len = strlen(name);
		if (cap - pos < name_len + (i > 0))
			return -ENOSPC;
		if (i > 0)
			buf[pos++] = ',';
		memcpy(buf + pos, name, name_len);
		pos += name_len;
	}
	if (pos > (size_t)INT32_MAX)
		return -ENOSPC;
	return (int)pos;
}

/* ---- data payloads ------------------------------------------------------ */

/* Total wire size of a recipe, or -errno. The fields must fit one package
 * together with the recipe id. */
static int recipe_size(const enum rtl_rtde_type *types, size_t n)
{
	size_t total = 0;

	if (!span_ok(types, n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		size_t s = rtl_rtde_type_size(types[i]);

		if (s == 0)
			return -EPROTO;
		total += s;
		if (total > RTL_RTDE_MAX_PAYLOAD_SIZE - 1)
			return -EMSGSIZE;
	}
	return (int)total;
}

RTL_API int rtl_rtde_layout(uint32_t *offsets, const enum rtl_rtde_type *types, size_t n)
{
	int total = recipe_size(types, n);
	uint32_t off = 0;

	if (total < 0 || !offsets)
		return total;
	for (size_t i = 0; i < n; i++) {
		offsets[i] = off;
		off += (uint32_t)rtl_rtde_type_size(types[i]);
	}
	return total;
}

/* Validate a recipe against a payload of @len bytes. A recipe too large for
 * a package cannot match any payload either. */
static int check_fields(const uint8_t *fields, size_t len, const enum rtl_rtde_type *types,
			size_t n)
{
	int total;

	if (!span_ok(fields, len))
		return -EINVAL;
	total = recipe_size(types, n);
	if (total == -EMSGSIZE)
		return -EBADMSG;
	if (total < 0)
		return total;
	if ((size_t)total != len)
		return -EBADMSG;
	return 0;
}

RTL_API int rtl_rtde_unpack(union rtl_rtde_value *out, const uint8_t *fields, size_t len,
			    const enum rtl_rtde_type *types, size_t n)
{
	int err;

	if (!span_ok(out, n))
		return -EINVAL;
	err = check_fields(fields, len, types, n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		rtl_rtde_load_value(&out[i], fields, types[i]);
		fields += rtl_rtde_type_size(types[i]);
	}
	return 0;
}

RTL_API int rtl_rtde_unpack_to(void *dst, const uint8_t *fields, size_t len,
			       const enum rtl_rtde_type *types, size_t n,
			       const uint32_t *host_offsets)
{
	unsigned char *d = dst;
	size_t off = 0;
	int err;

	if (!dst && n > 0)
		return -EINVAL;
	err = check_fields(fields, len, types, n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		size_t s = rtl_rtde_type_size(types[i]);

		rtl_rtde_load_value(d + (host_offsets ? host_offsets[i] : off), fields + off,
				    types[i]);
		off += s;
	}
	return 0;
}

RTL_API int rtl_rtde_unpack_doubles(double *out, size_t max, const uint8_t *fields, size_t len,
				    const enum rtl_rtde_type *types, size_t n)
{
	size_t count = 0;
	int err;

	err = check_fields(fields, len, types, n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		count += rtl_rtde_type_elems(types[i]);
	if (!span_ok(out, max))
		return -EINVAL;
	if (count > max)
		return -ENOSPC;

	count = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned elems = rtl_rtde_type_elems(types[i]);

		for (unsigned e = 0; e < elems; e++) {
			double v;

			switch (types[i]) {
			case RTL_RTDE_TYPE_BOOL:
				v = fields[0] ? 1.0 : 0.0;
				break;
			case RTL_RTDE_TYPE_UINT8:
				v = fields[0];
				break;
			case RTL_RTDE_TYPE_UINT32:
			case RTL_RTDE_TYPE_VECTOR6UINT32:
				v = rtl_rtde_load_u32(fields + 4 * e);
				break;
			case RTL_RTDE_TYPE_INT32:
			case RTL_RTDE_TYPE_VECTOR6INT32:
				v = rtl_rtde_load_i32(fields + 4 * e);
				break;
			case RTL_RTDE_TYPE_UINT64:
				v = (double)rtl_rtde_load_u64(fields);
				break;
			default: /* DOUBLE and the double vectors */
				v = rtl_rtde_load_f64(fields + 8 * e);
				break;
			}
			out[count++] = v;
		}
		fields += rtl_rtde_type_size(types[i]);
	}
	return (int)count;
}

static int check_pack(uint8_t *fields, size_t cap, const enum rtl_rtde_type *types, size_t n,
		      const void *src)
{
	int total;

	if (!span_ok(fields, cap) || (!src && n > 0))
		return -EINVAL;
	total = recipe_size(types, n);
	if (total == -EMSGSIZE)
		return -ENOSPC;
	if (total < 0)
		return total;
	if ((size_t)total > cap)
		return -ENOSPC;
	return total;
}

RTL_API int rtl_rtde_pack(uint8_t *fields, size_t cap, const enum rtl_rtde_type *types, size_t n,
			  const union rtl_rtde_value *in)
{
	int total = check_pack(fields, cap, types, n, in);

	if (total < 0)
		return total;
	for (size_t i = 0; i < n; i++) {
		rtl_rtde_store_value(fields, &in[i], types[i]);
		fields += rtl_rtde_type_size(types[i]);
	}
	return total;
}

RTL_API int rtl_rtde_pack_from(uint8_t *fields, size_t cap, const enum rtl_rtde_type *types,
			       size_t n, const uint32_t *host_offsets, const void *src)
{
	const unsigned char *s = src;
	int total = check_pack(fields, cap, types, n, src);
	size_t off = 0;

	if (total < 0)
		return total;
	for (size_t i = 0; i < n; i++) {
		rtl_rtde_store_value(fields + off, s + (host_offsets ? host_offsets[i] : off),
				     types[i]);
		off += rtl_rtde_type_size(types[i]);
	}
	return total;
}

/* ---- framing and package names -------------------------------------- */

RTL_API int rtl_rtde_package_type(const uint8_t *buf, size_t len)
{
	if (!span_ok(buf, len))
		return -EINVAL;
	if (len < RTL_RTDE_HEADER_SIZE)
		return -EMSGSIZE;
	if (rtl_rtde_load_u16(buf) != len)
		return -EMSGSIZE;
	return buf[2];
}

RTL_API const char *rtl_rtde_pkg_name(int type)
{
	switch (type) {
	case RTL_RTDE_PKG_PROTOCOL_VERSION:
		return "REQUEST_PROTOCOL_VERSION";
	case RTL_RTDE_PKG_URCONTROL_VERSION:
		return "GET_URCONTROL_VERSION";
	case RTL_RTDE_PKG_TEXT_MESSAGE:
		return "TEXT_MESSAGE";
	case RTL_RTDE_PKG_DATA:
		return "DATA_PACKAGE";
	case RTL_RTDE_PKG_SETUP_OUTPUTS:
		return "CONTROL_PACKAGE_SETUP_OUTPUTS";
	case RTL_RTDE_PKG_SETUP_INPUTS:
		return "CONTROL_PACKAGE_SETUP_INPUTS";
	case RTL_RTDE_PKG_START:
		return "CONTROL_PACKAGE_START";
	case RTL_RTDE_PKG_PAUSE:
		return "CONTROL_PACKAGE_PAUSE";
	default:
		return NULL;
	}
}

/* ---- fixed-layout packages ------------------------------------------- */

static int encode_empty(uint8_t *buf, size_t cap, int type)
{
	return begin_pkg(buf, cap, type, 0);
}

/* Open package @buf of @type whose payload must be @size bytes long
 * (-EINVAL first when @bad_args, as open_pkg()). */
static int open_fixed(bool bad_args, const uint8_t *buf, size_t len, int type, size_t size,
		      const uint8_t **payload)
{
	size_t plen;
	int err = open_pkg(bad_args, buf, len, type, payload, &plen);

	if (err)
		return err;
	return plen == size ? 0 : -EBADMSG;
}

static int decode_empty(const uint8_t *buf, size_t len, int type)
{
	const uint8_t *p;

	return open_fixed(false, buf, len, type, 0, &p);
}

RTL_API int rtl_rtde_encode_protocol_version_request(uint8_t *buf, size_t cap, uint16_t version)
{
	int n = begin_pkg(buf, cap, RTL_RTDE_PKG_PROTOCOL_VERSION, 2);

	if (n < 0)
		return n;
	rtl_rtde_store_u16(buf + 3, version);
	return n;
}

RTL_API int rtl_rtde_decode_protocol_version_request(uint16_t *version, const uint8_t *buf,
						     size_t len)
{
	const uint8_t *p;
	int err = open_fixed(!version, buf, len, RTL_RTDE_PKG_PROTOCOL_VERSION, 2, &p);

	if (err)
		return err;
	*version = rtl_rtde_load_u16(p);
	return 0;
}

RTL_API int rtl_rtde_encode_urcontrol_version_request(uint8_t *buf, size_t cap)
{
	return encode_empty(buf, cap, RTL_RTDE_PKG_URCONTROL_VERSION);
}

RTL_API int rtl_rtde_decode_urcontrol_version_request(const uint8_t *buf, size_t len)
{
	return decode_empty(buf, len, RTL_RTDE_PKG_URCONTROL_VERSION);
}

RTL_API int rtl_rtde_encode_urcontrol_version_reply(uint8_t *buf, size_t cap,
						    const struct rtl_rtde_controller_version *v)
{
	int n;

	if (!v)
		return -EINVAL;
	n = begin_pkg(buf, cap, RTL_RTDE_PKG_URCONTROL_VERSION, 16);
	if (n < 0)
		return n;
	rtl_rtde_store_u32(buf + 3, v->major);
	rtl_rtde_store_u32(buf + 7, v->minor);
	rtl_rtde_store_u32(buf + 11, v->bugfix);
	rtl_rtde_store_u32(buf + 15, v->build);
	return n;
}

RTL_API int rtl_rtde_decode_urcontrol_version_reply(struct rtl_rtde_controller_version *v,
						    const uint8_t *buf, size_t len)
{
	const uint8_t *p;
	int err = open_fixed(!v, buf, len, RTL_RTDE_PKG_URCONTROL_VERSION, 16, &p);

	if (err)
		return err;
	v->major = rtl_rtde_load_u32(p);
	v->minor = rtl_rtde_load_u32(p + 4);
	v->bugfix = rtl_rtde_load_u32(p + 8);
	v->build = rtl_rtde_load_u32(p + 12);
	return 0;
}

RTL_API int rtl_rtde_encode_start(uint8_t *buf, size_t cap)
{
	return encode_empty(buf, cap, RTL_RTDE_PKG_START);
}

RTL_API int rtl_rtde_decode_start(const uint8_t *buf, size_t len)
{
	return decode_empty(buf, len, RTL_RTDE_PKG_START);
}

RTL_API int rtl_rtde_encode_pause(uint8_t *buf, size_t cap)
{
	return encode_empty(buf, cap, RTL_RTDE_PKG_PAUSE);
}

RTL_API int rtl_rtde_decode_pause(const uint8_t *buf, size_t len)
{
	return decode_empty(buf, len, RTL_RTDE_PKG_PAUSE);
}

static bool has_accepted_reply(enum rtl_rtde_pkg type)
{
	return type == RTL_RTDE_PKG_PROTOCOL_VERSION || type == RTL_RTDE_PKG_START ||
	       type == RTL_RTDE_PKG_PAUSE;
}

RTL_API int rtl_rtde_encode_accepted_reply(uint8_t *buf, size_t cap, enum rtl_rtde_pkg type,
					   bool accepted)
{
	int n;

	if (!has_accepted_reply(type))
		return -EINVAL;
	n = begin_pkg(buf, cap, type, 1);
	if (n < 0)
		return n;
	buf[3] = accepted ? 1 : 0;
	return n;
}

RTL_API int rtl_rtde_decode_accepted_reply(bool *accepted, const uint8_t *buf, size_t len,
					   enum rtl_rtde_pkg type)
{
	const uint8_t *p;
	int err = open_fixed(!accepted || !has_accepted_reply(type), buf, len, type, 1, &p);

	if (err)
		return err;
	*accepted = p[0] != 0;
	return 0;
}

/* ---- setup requests and replies -------------------------------------- */

RTL_API int rtl_rtde_encode_setup_outputs(uint8_t *buf, size_t cap, enum rtl_rtde_protocol proto,
					  double frequency, const char *names, size_t names_len)
{
	size_t head = proto == RTL_RTDE_PROTOCOL_V2 ? 8 : 0;
	int n;

	if (!proto_ok(proto) || !span_ok(names, names_len))
		return -EINVAL;
	n = begin_pkg(buf, cap, RTL_RTDE_PKG_SETUP_OUTPUTS, add_sat(head, names_len));
	if (n < 0)
		return n;
	if (head)
		rtl_rtde_store_f64(buf + 3, frequency);
	copy(buf + 3 + head, names, names_len);
	return n;
}

RTL_API int rtl_rtde_decode_setup_outputs(struct rtl_rtde_setup_request *req, const uint8_t *buf,
					  size_t len, enum rtl_rtde_protocol proto)
{
	const uint8_t *p;
	size_t plen;
	int err =
		open_pkg(!req || !proto_ok(proto), buf, len, RTL_RTDE_PKG_SETUP_OUTPUTS, &p, &plen);

	if (err)
		return err;
	req->frequency = 0;
	if (proto == RTL_RTDE_PROTOCOL_V2) {
		if (plen < 8)
			return -EBADMSG;
		req->frequency = rtl_rtde_load_f64(p);
		p += 8;
		plen -= 8;
	}
	req->names = (const char *)p;
	req->names_len = plen;
	return 0;
}

RTL_API int rtl_rtde_encode_setup_inputs(uint8_t *buf, size_t cap, const char *names,
					 size_t names_len)
{
	int n;

	if (!span_ok(names, names_len))
		return -EINVAL;
	n = begin_pkg(buf, cap, RTL_RTDE_PKG_SETUP_INPUTS, names_len);
	if (n < 0)
		return n;
	copy(buf + 3, names, names_len);
	return n;
}

RTL_API int rtl_rtde_decode_setup_inputs(struct rtl_rtde_setup_request *req, const uint8_t *buf,
					 size_t len)
{
	const uint8_t *p;
	size_t plen;
	int err = open_pkg(!req, buf, len, RTL_RTDE_PKG_SETUP_INPUTS, &p, &plen);

	if (err)
		return err;
	req->frequency = 0;
	req->names = (const char *)p;
	req->names_len = plen;
	return 0;
}

static int encode_setup_reply(uint8_t *buf, size_t cap, int type, bool with_id, uint8_t recipe_id,
			      const char *types, size_t types_len)
{
	int n;

	if (!span_ok(types, types_len))
		return -EINVAL;
	n = begin_pkg(buf, cap, type, add_sat(with_id, types_len));
	if (n < 0)
		return n;
	if (with_id)
		buf[3] = recipe_id;
	copy(buf + 3 + with_id, types, types_len);
	return n;
}

static int decode_setup_reply(const uint8_t *buf, size_t len, int type, bool with_id,
			      struct rtl_rtde_setup_reply *reply)
{
	const uint8_t *p;
	size_t plen;
	int err = open_pkg(!reply, buf, len, type, &p, &plen);

	if (err)
		return err;
	reply->has_recipe_id = with_id;
	reply->recipe_id = 0;
	if (with_id) {
		if (plen < 1)
			return -EBADMSG;
		reply->recipe_id = p[0];
		p++;
		plen--;
	}
	reply->types = (const char *)p;
	reply->types_len = plen;
	return 0;
}

RTL_API int rtl_rtde_encode_setup_outputs_reply(uint8_t *buf, size_t cap,
						enum rtl_rtde_protocol proto, uint8_t recipe_id,
						const char *types, size_t types_len)
{
	if (!proto_ok(proto))
		return -EINVAL;
	return encode_setup_reply(buf, cap, RTL_RTDE_PKG_SETUP_OUTPUTS,
				  proto == RTL_RTDE_PROTOCOL_V2, recipe_id, types, types_len);
}

RTL_API int rtl_rtde_decode_setup_outputs_reply(struct rtl_rtde_setup_reply *reply,
						const uint8_t *buf, size_t len,
						enum rtl_rtde_protocol proto)
{
	if (!proto_ok(proto))
		return -EINVAL;
	return decode_setup_reply(buf, len, RTL_RTDE_PKG_SETUP_OUTPUTS,
				  proto == RTL_RTDE_PROTOCOL_V2, reply);
}

RTL_API int rtl_rtde_encode_setup_inputs_reply(uint8_t *buf, size_t cap, uint8_t recipe_id,
					       const char *types, size_t types_len)
{
	return encode_setup_reply(buf, cap, RTL_RTDE_PKG_SETUP_INPUTS, true, recipe_id, types,
				  types_len);
}

RTL_API int rtl_rtde_decode_setup_inputs_reply(struct rtl_rtde_setup_reply *reply,
					       const uint8_t *buf, size_t len)
{
	return decode_setup_reply(buf, len, RTL_RTDE_PKG_SETUP_INPUTS, true, reply);
}

/* ---- text messages --------------------------------------------------- */

RTL_API int rtl_rtde_encode_text(uint8_t *buf, size_t cap, enum rtl_rtde_protocol proto,
				 enum rtl_rtde_dir dir, const struct rtl_rtde_text *text)
{
	uint8_t *p;
	int n;

	if (!text || !proto_ok(proto) || !dir_ok(dir) || !span_ok(text->message, text->message_len))
		return -EINVAL;

	if (v1_from_controller(proto, dir)) {
		n = begin_pkg(buf, cap, RTL_RTDE_PKG_TEXT_MESSAGE, add_sat(1, text->message_len));
		if (n < 0)
			return n;
		buf[3] = text->level;
		copy(buf + 4, text->message, text->message_len);
		return n;
	}

	if (!span_ok(text->source, text->source_len))
		return -EINVAL;
	if (text->message_len > RTL_RTDE_MAX_TEXT_LEN || text->source_len > RTL_RTDE_MAX_TEXT_LEN)
		return -EMSGSIZE;
	n = begin_pkg(buf, cap, RTL_RTDE_PKG_TEXT_MESSAGE,
		      3 + text->message_len + text->source_len);
	if (n < 0)
		return n;
	p = buf + 3;
	*p++ = (uint8_t)text->message_len;
	copy(p, text->message, text->message_len);
	p += text->message_len;
	*p++ = (uint8_t)text->source_len;
	copy(p, text->source, text->source_len);
	p += text->source_len;
	*p = text->level;
	return n;
}

RTL_API int rtl_rtde_decode_text(struct rtl_rtde_text *text, const uint8_t *buf, size_t len,
				 enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir)
{
	const uint8_t *p;
	size_t plen, mlen, slen;
	int err = open_pkg(!text || !proto_ok(proto) || !dir_ok(dir), buf, len,
			   RTL_RTDE_PKG_TEXT_MESSAGE, &p, &plen);

	if (err)
		return err;
	if (plen < 1)
		return -EBADMSG;

	if (v1_from_controller(proto, dir)) {
		text->level = p[0];
		text->message = (const char *)p + 1;
		text->message_len = plen - 1;
		text->source = (const char *)p + plen;
		text->source_len = 0;
		return 0;
	}

	/* len m, m bytes, len s, s bytes, level: exactly 3 + m + s bytes. */
	mlen = p[0];
	if (plen < 2 + mlen)
		return -EBADMSG;
	slen = p[1 + mlen];
	if (plen != 3 + mlen + slen)
		return -EBADMSG;
	text->message = (const char *)p + 1;
	text->message_len = mlen;
	text->source = (const char *)p + 2 + mlen;
	text->source_len = slen;
	text->level = p[2 + mlen + slen];
	return 0;
}

/* ---- controller text, made printable ------------------------------------ */

/* The escape of byte @b into @e: the byte itself, \\, \t, \n, \r or
 * \xHH. Returns its length (1, 2 or 4). */
static size_t escape_byte(unsigned char b, char e[4])
{
	static const char hex[] = "0123456789abcdef";

	e[0] = '\\';
	switch (b) {
	case '\t':
		e[1] = 't';
		return 2;
	case '\n':
		e[1] = 'n';
		return 2;
	case '\r':
		e[1] = 'r';
		return 2;
	case '\\':
		e[1] = '\\';
		return 2;
	default:
		break;
	}
	if (b >= 0x20 && b < 0x7f) {
		e[0] = (char)b;
		return 1;
	}
	e[1] = 'x';
	e[2] = hex[b >> 4];
	e[3] = hex[b & 0xf];
	return 4;
}

RTL_API size_t rtl_rtde_text_sanitize(char *dst, size_t dst_size, const char *src, size_t n)
{
	const char *mark = RTL_RTDE_TEXT_CUT_MARK;
	const size_t mark_len = sizeof(RTL_RTDE_TEXT_CUT_MARK) - 1;
	size_t total = 0, out = 0, room;
	char e[4];

	if (!dst || !dst_size)
		return 0;
	if (!src)
		n = 0;
	/* Whether it all fits decides whether room for the mark is kept. */
	for (size_t i = 0; i < n; i++)
		total += escape_byte((unsigned char)src[i], e);
	room = dst_size - 1;
	if (total > room)
		room = room > mark_len ? room - mark_len : 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = escape_byte((unsigned char)src[i], e);

		if (out + k > room)
			break;
		memcpy(dst + out, e, k);
		out += k;
	}
	if (total > out) {
		/* Cut: the mark, or as much of it as fits a tiny buffer. */
		for (size_t m = 0; m < mark_len && out + 1 < dst_size; m++)
			dst[out++] = mark[m];
	}
	dst[out] = '\0';
	return out;
}

/* ---- data packages --------------------------------------------------- */

RTL_API int rtl_rtde_data_fields_offset(enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir)
{
	if (!proto_ok(proto) || !dir_ok(dir))
		return -EINVAL;
	return v1_from_controller(proto, dir) ? RTL_RTDE_HEADER_SIZE : RTL_RTDE_HEADER_SIZE + 1;
}

RTL_API int rtl_rtde_encode_data(uint8_t *buf, size_t cap, enum rtl_rtde_protocol proto,
				 enum rtl_rtde_dir dir, uint8_t recipe_id, const uint8_t *fields,
				 size_t fields_len)
{
	int off = rtl_rtde_data_fields_offset(proto, dir);
	size_t total;

	if (off < 0 || !buf || !span_ok(fields, fields_len))
		return -EINVAL;
	total = add_sat((size_t)off, fields_len);
	if (total > RTL_RTDE_MAX_PACKAGE_SIZE)
		return -EMSGSIZE;
	if (cap < total)
		return -ENOSPC;
	/* Fields first: they may already sit in @buf (in-place encoding) or
	 * overlap it; the header then overwrites only bytes before them. */
	if (fields_len && fields != buf + off)
		memmove(buf + off, fields, fields_len);
	rtl_rtde_store_u16(buf, (uint16_t)total);
	buf[2] = RTL_RTDE_PKG_DATA;
	if (off > RTL_RTDE_HEADER_SIZE)
		buf[3] = recipe_id;
	return (int)total;
}

RTL_API int rtl_rtde_decode_data(struct rtl_rtde_data *data, const uint8_t *buf, size_t len,
				 enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir)
{
	const uint8_t *p;
	size_t plen;
	int err = open_pkg(!data || !proto_ok(proto) || !dir_ok(dir), buf, len, RTL_RTDE_PKG_DATA,
			   &p, &plen);

	if (err)
		return err;
	data->has_recipe_id = !v1_from_controller(proto, dir);
	data->recipe_id = 0;
	if (data->has_recipe_id) {
		if (plen < 1)
			return -EBADMSG;
		data->recipe_id = p[0];
		p++;
		plen--;
	}
	data->fields = p;
	data->fields_len = plen;
	return 0;
}

/* ---- any package -------------------------------------------------------- */

RTL_API int rtl_rtde_decode(struct rtl_rtde_msg *msg, const uint8_t *buf, size_t len,
			    enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir)
{
	bool ctrl = dir == RTL_RTDE_FROM_CONTROLLER;
	int type;

	if (!msg || !proto_ok(proto) || !dir_ok(dir))
		return -EINVAL;
	type = rtl_rtde_package_type(buf, len);
	if (type < 0)
		return type;
	msg->type = (enum rtl_rtde_pkg)type;
	msg->dir = dir;

	switch (type) {
	case RTL_RTDE_PKG_PROTOCOL_VERSION:
	case RTL_RTDE_PKG_START:
	case RTL_RTDE_PKG_PAUSE:
		if (ctrl)
			return rtl_rtde_decode_accepted_reply(&msg->u.accepted, buf, len,
							      msg->type);
		if (type == RTL_RTDE_PKG_PROTOCOL_VERSION)
			return rtl_rtde_decode_protocol_version_request(&msg->u.protocol_version,
									buf, len);
		return decode_empty(buf, len, type);
	case RTL_RTDE_PKG_URCONTROL_VERSION:
		if (ctrl)
			return rtl_rtde_decode_urcontrol_version_reply(&msg->u.version, buf, len);
		return rtl_rtde_decode_urcontrol_version_request(buf, len);
	case RTL_RTDE_PKG_TEXT_MESSAGE:
		return rtl_rtde_decode_text(&msg->u.text, buf, len, proto, dir);
	case RTL_RTDE_PKG_DATA:
		return rtl_rtde_decode_data(&msg->u.data, buf, len, proto, dir);
	case RTL_RTDE_PKG_SETUP_OUTPUTS:
		if (ctrl)
			return rtl_rtde_decode_setup_outputs_reply(&msg->u.setup_reply, buf, len,
								   proto);
		return rtl_rtde_decode_setup_outputs(&msg->u.setup, buf, len, proto);
	case RTL_RTDE_PKG_SETUP_INPUTS:
		if (ctrl)
			return rtl_rtde_decode_setup_inputs_reply(&msg->u.setup_reply, buf, len);
		return rtl_rtde_decode_setup_inputs(&msg->u.setup, buf, len);
	default:
		return -EPROTO;
	}
}

RTL_API int rtl_rtde_encode(uint8_t *buf, size_t cap, enum rtl_rtde_protocol proto,
			    const struct rtl_rtde_msg *msg)
{
	bool ctrl;

	if (!msg || !proto_ok(proto) || !dir_ok(msg->dir))
		return -EINVAL;
	ctrl = msg->dir == RTL_RTDE_FROM_CONTROLLER;

	switch (msg->type) {
	case RTL_RTDE_PKG_PROTOCOL_VERSION:
	case RTL_RTDE_PKG_START:
	case RTL_RTDE_PKG_PAUSE:
		if (ctrl)
			return rtl_rtde_encode_accepted_reply(buf, cap, msg->type, msg->u.accepted);
		if (msg->type == RTL_RTDE_PKG_PROTOCOL_VERSION)
			return rtl_rtde_encode_protocol_version_request(buf, cap,
									msg->u.protocol_version);
		return encode_empty(buf, cap, msg->type);
	case RTL_RTDE_PKG_URCONTROL_VERSION:
		if (ctrl)
			return rtl_rtde_encode_urcontrol_version_reply(buf, cap, &msg->u.version);
		return rtl_rtde_encode_urcontrol_version_request(buf, cap);
	case RTL_RTDE_PKG_TEXT_MESSAGE:
		return rtl_rtde_encode_text(buf, cap, proto, msg->dir, &msg->u.text);
	case RTL_RTDE_PKG_DATA:
		return rtl_rtde_encode_data(buf, cap, proto, msg->dir, msg->u.data.recipe_id,
					    msg->u.data.fields, msg->u.data.fields_len);
	case RTL_RTDE_PKG_SETUP_OUTPUTS:
		if (ctrl)
			return rtl_rtde_encode_setup_outputs_reply(
				buf, cap, proto, msg->u.setup_reply.recipe_id,
				msg->u.setup_reply.types, msg->u.setup_reply.types_len);
		return rtl_rtde_encode_setup_outputs(buf, cap, proto, msg->u.setup.frequency,
						     msg->u.setup.names, msg->u.setup.names_len);
	case RTL_RTDE_PKG_SETUP_INPUTS:
		if (ctrl)
			return rtl_rtde_encode_setup_inputs_reply(
				buf, cap, msg->u.setup_reply.recipe_id, msg->u.setup_reply.types,
				msg->u.setup_reply.types_len);
		return rtl_rtde_encode_setup_inputs(buf, cap, msg->u.setup.names,
						    msg->u.setup.names_len);
	default:
		return -EINVAL;
	}
}
