/* arbwb.native._jsonlines: the lines of a chunk file, found while checking every row in one pass.
 *
 * scan(data, strings, ints) gives the lines' bounds and which lines hold a raw "\u", "\/" or
 * U+0130 (strict grep's special lines) only when every line of `data` is certainly one JSON
 * object (RFC 8259, whitespace around it) in valid UTF-8 holding each key of `strings` once
 * with a string value and each key of `ints` once with an integer literal of at most 18
 * digits, so Polars' read of those fields with a String / Int64 schema gives no null. It is
 * conservative: a blank line, an escaped key, a lone surrogate escape, a number beyond 18
 * digits, any value but a string or an integer (chunk rows hold no other, spec §3.1), a
 * repeated key or a mistyped field all give None, and the caller then reads the file the
 * general way (Arrow and Polars),
 * which accepts or reports the located problem. String bodies are passed over 64 bytes at a
 * time (SSE2), so one pass replaces a newline search, a UTF-8 validation, a regex pass and a
 * JSON parse (arbwb-defined speed-up for strict grep; tests/test_jsonlines.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_FIELDS 32
#define MAX_DIGITS 18

typedef struct {
    const unsigned char *p, *end;
    int special; /* the line so far holds a raw \u or \/ or U+0130 */
} Cur;

static void skip_ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')) c->p++;
}

static int hex(unsigned char b) {
    if (b >= '0' && b <= '9') return b - '0';
    if (b >= 'a' && b <= 'f') return b - 'a' + 10;
    if (b >= 'A' && b <= 'F') return b - 'A' + 10;
    return -1;
}

/* The code unit of a \uXXXX escape at p, or -1 when there is none. */
static int escape_at(const unsigned char *p, const unsigned char *end) {
    if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return -1;
    int v = 0;
    for (int k = 2; k < 6; k++) {
        int h = hex(p[k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* The bytes of the escape at p (its backslash): 2, 6 or 12 (a surrogate pair); 0 when it is
 * invalid or left to Polars (a lone surrogate). Marks the line special when the raw bytes
 * hold a backslash then "u" or "/" (also the second backslash of an escaped backslash). */
static size_t escape_len(Cur *c, const unsigned char *p) {
    const unsigned char *end = c->end;
    if (end - p < 2) return 0;
    switch (p[1]) {
    case '\\':
        if (end - p > 2 && (p[2] == 'u' || p[2] == '/')) c->special = 1;
        return 2;
    case '/': c->special = 1; return 2;
    case '"': case 'b': case 'f': case 'n': case 'r': case 't': return 2;
    case 'u': {
        c->special = 1;
        int v = escape_at(p, end);
        if (v < 0 || (v >= 0xdc00 && v <= 0xdfff)) return 0;
        if (v < 0xd800 || v > 0xdbff) return 6;
        int low = escape_at(p + 6, end);
        return low >= 0xdc00 && low <= 0xdfff ? 12 : 0;
    }
    default: return 0;
    }
}

/* The bytes of the UTF-8 character at p (its lead byte >= 0x80): 2 to 4, or 0 when it is not
 * well-formed (overlong, a surrogate, past U+10FFFF, cut short); U+0130 marks the line. */
static size_t utf8_len(Cur *c, const unsigned char *p) {
    ptrdiff_t room = c->end - p;
    unsigned char b = p[0];
#define CONT(k) (room > (k) && (p[k] & 0xc0) == 0x80)
    if (b < 0xc2) return 0;
    if (b < 0xe0) {
        if (!CONT(1)) return 0;
        if (b == 0xc4 && p[1] == 0xb0) c->special = 1;
        return 2;
    }
    if (b < 0xf0) {
        if (!CONT(1) || !CONT(2)) return 0;
        if ((b == 0xe0 && p[1] < 0xa0) || (b == 0xed && p[1] > 0x9f)) return 0;
        return 3;
    }
    if (b < 0xf5) {
        if (!CONT(1) || !CONT(2) || !CONT(3)) return 0;
        if ((b == 0xf0 && p[1] < 0x90) || (b == 0xf4 && p[1] > 0x8f)) return 0;
        return 4;
    }
    return 0;
#undef CONT
}

/* The bytes a stop at p takes inside a string: an escape or a non-ASCII character; 0 when it
 * is invalid (a raw control character among them). */
static size_t stop_len(Cur *c, const unsigned char *p, int *escaped) {
    if (*p == '\\') {
        if (escaped) *escaped = 1;
        return escape_len(c, p);
    }
    return *p >= 0x80 ? utf8_len(c, p) : 0;
}

#if defined(__SSE2__)
/* Bit i: byte i of the 64 at p is a quote, a backslash, a control character or not ASCII. */
static inline uint64_t stops64(const unsigned char *p) {
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
    const __m128i control = _mm_set1_epi8(0x1f);
    uint64_t stops = 0;
    for (int k = 0; k < 4; k++) {
        __m128i b = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, slash));
        stop = _mm_or_si128(stop, _mm_cmpeq_epi8(_mm_max_epu8(b, control), control));
        stop = _mm_or_si128(stop, b); /* the high bit: not ASCII */
        stops |= (uint64_t)(unsigned)_mm_movemask_epi8(stop) << (16 * k);
    }
    return stops;
}
#endif

/* A string at c->p (its opening quote); 1 and past it when valid. `escaped`: set when it
 * holds an escape (may be NULL). ASCII without escapes is passed over 64 bytes at a time
 * (SSE2). */
static int string_at(Cur *c, int *escaped) {
    const unsigned char *p = c->p + 1, *end = c->end;
#if defined(__SSE2__)
    while (end - p >= 64) {
        uint64_t stops = stops64(p);
        size_t next = 64; /* where the next 64 start, from p */
        while (stops) {
            size_t i = (size_t)__builtin_ctzll(stops);
            if (p[i] == '"') {
                c->p = p + i + 1;
                return 1;
            }
            size_t n = stop_len(c, p + i, escaped);
            if (!n) return 0;
            if (i + n >= 64) {
                next = i + n;
                break;
            }
            stops &= ~((1ULL << (i + n)) - 1); /* past this stop (an escape may hold a quote) */
        }
        p += next;
    }
#endif
    for (;;) {
        if (p >= end) return 0;
        unsigned char b = *p;
        if (b == '"') {
            c->p = p + 1;
            return 1;
        }
        if (b >= 0x20 && b < 0x80 && b != '\\') {
            p++;
            continue;
        }
        size_t n = stop_len(c, p, escaped);
        if (!n) return 0;
        p += n;
    }
}

/* An integer literal of at most MAX_DIGITS digits, not followed by a fraction or exponent. */
static int integer_at(Cur *c) {
    if (c->p < c->end && *c->p == '-') c->p++;
    const unsigned char *first = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    if (c->p == first || c->p - first > MAX_DIGITS || (*first == '0' && c->p - first > 1)) return 0;
    return !(c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E'));
}

typedef struct {
    const char *name;
    size_t len;
    int integer; /* 1: an integer literal, 0: a string */
} Field;

/* One line at c->p (a row object, then whitespace and its line break or the end). */
static int row_at(Cur *c, const Field *fields, int n_fields) {
    int seen[MAX_FIELDS] = {0};
    skip_ws(c);
    if (c->p >= c->end || *c->p != '{') return 0;
    c->p++;
    skip_ws(c);
    for (;;) {
        if (c->p >= c->end || *c->p != '"') return 0;
        const unsigned char *key = c->p + 1;
        int escaped = 0;
        if (!string_at(c, &escaped) || escaped) return 0;
        size_t key_len = (size_t)(c->p - 1 - key);
        skip_ws(c);
        if (c->p >= c->end || *c->p != ':') return 0;
        c->p++;
        skip_ws(c);
        int which = -1;
        for (int i = 0; i < n_fields && which < 0; i++)
            if (fields[i].len == key_len && !memcmp(fields[i].name, key, key_len)) which = i;
        if (which >= 0 && seen[which]++) return 0;
        int string = c->p < c->end && *c->p == '"'; /* other keys: any string or integer */
        if (which >= 0 && string == fields[which].integer) return 0; /* mistyped */
        if (!(string ? string_at(c, NULL) : integer_at(c))) return 0;
        skip_ws(c);
        if (c->p >= c->end) return 0;
        if (*c->p == '}') break;
        if (*c->p != ',') return 0;
        c->p++;
        skip_ws(c);
    }
    c->p++;
    skip_ws(c);
    if (c->p < c->end) {
        if (*c->p != '\n') return 0;
        c->p++;
    }
    for (int i = 0; i < n_fields; i++)
        if (!seen[i]) return 0;
    return 1;
}

/* The lines of data (all certainly rows): bounds[k] is where line k starts (then the end of
 * the data), special[k] whether it holds a raw \u or \/ or U+0130; both to be freed. 0
 * when a line is not certainly a row (or memory ran out: *n_lines is then -1). */
static int scan_in(const unsigned char *data, size_t size, const Field *fields, int n_fields,
                   int64_t **bounds, unsigned char **special, Py_ssize_t *n_lines) {
    size_t cap = 1024, n = 0;
    *bounds = malloc((cap + 1) * sizeof(int64_t));
    *special = malloc(cap);
    Cur c = {data, data + size, 0};
    while (*bounds && *special && c.p < c.end) {
        if (n == cap) {
            cap *= 2;
            int64_t *more_bounds = realloc(*bounds, (cap + 1) * sizeof(int64_t));
            if (more_bounds) *bounds = more_bounds;
            unsigned char *more_special = realloc(*special, cap);
            if (more_special) *special = more_special;
            if (!more_bounds || !more_special) break;
        }
        (*bounds)[n] = (int64_t)(c.p - data);
        c.special = 0;
        if (!row_at(&c, fields, n_fields)) {
            *n_lines = 0;
            return 0;
        }
        (*special)[n++] = (unsigned char)c.special;
    }
    if (!*bounds || !*special || c.p < c.end) {
        *n_lines = -1;
        return 0;
    }
    (*bounds)[n] = (int64_t)size;
    *n_lines = (Py_ssize_t)n;
    return 1;
}

/* Append the keys of a tuple of bytes to `fields`; 0 with an exception set on bad input. */
static int add_fields(PyObject *names, int integer, Field *fields, int *n_fields) {
    if (!PyTuple_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "field names: expected a tuple of bytes");
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        if (!PyBytes_Check(name) || *n_fields >= MAX_FIELDS) {
            PyErr_SetString(PyExc_TypeError, "field names: at most 32 bytes objects");
            return 0;
        }
        Field f = {PyBytes_AS_STRING(name), (size_t)PyBytes_GET_SIZE(name), integer};
        fields[(*n_fields)++] = f;
    }
    return 1;
}

PyDoc_STRVAR(scan_doc,
             "scan(data, strings, ints) -> (bounds, special) | None\n\n"
             "When every line of data is certainly a JSON object with each key of strings (a "
             "tuple of bytes) once as a string and each key of ints once as an integer of at "
             "most 18 digits: bounds (int64, each line's start, then the end of data) and "
             "special (uint8 per line: it holds a raw \\u or \\/ or U+0130), as bytes; else "
             "None, leaving the answer to a full parse.");

static PyObject *scan(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    PyObject *strings, *ints;
    if (!PyArg_ParseTuple(args, "y*OO", &data, &strings, &ints)) return NULL;
    Field fields[MAX_FIELDS];
    int n_fields = 0, clean = 0;
    PyObject *result = NULL;
    if (add_fields(strings, 0, fields, &n_fields) && add_fields(ints, 1, fields, &n_fields)) {
        int64_t *bounds = NULL;
        unsigned char *special = NULL;
        Py_ssize_t n_lines = 0;
        Py_BEGIN_ALLOW_THREADS
        clean = scan_in(data.buf, (size_t)data.len, fields, n_fields, &bounds, &special, &n_lines);
        Py_END_ALLOW_THREADS
        if (clean)
            result = Py_BuildValue(
                "(y#y#)", (const char *)bounds, (Py_ssize_t)((n_lines + 1) * sizeof(int64_t)),
                (const char *)special, n_lines);
        else if (n_lines < 0)
            PyErr_NoMemory();
        else
            result = Py_NewRef(Py_None);
        free(bounds);
        free(special);
    }
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, scan_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_jsonlines",
    .m_doc = "The lines of a chunk file, found while checking every row in one pass.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__jsonlines(void) { return PyModule_Create(&module); }
