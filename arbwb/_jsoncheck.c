/* arbwb._jsoncheck: whether every line of a chunk file is certainly a row Polars reads whole.
 *
 * rows_clean(data, strings, ints) is True only when every line of `data` is one JSON object
 * (RFC 8259, with whitespace around it) holding each key of `strings` once with a string value
 * and each key of `ints` once with an integer literal of at most 18 digits, so Polars' read of
 * those fields with a String / Int64 schema gives no null. It is conservative: a blank line, an
 * escaped key, a lone surrogate escape, a number beyond 18 digits or an exponent
 * beyond 2, nesting beyond 64 levels, a repeated key or a mistyped field all answer False, and
 * the caller then checks the file with Polars, which accepts or reports the located problem.
 * UTF-8 validity is the caller's (Arrow validates the lines first). String bodies are skipped
 * 16 bytes at a time (SSE2), so a file is checked at memory speed instead of being parsed
 * (arbwb-defined speed-up for strict grep's row check; tests/test_jsoncheck.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_DEPTH 64
#define MAX_FIELDS 32
#define MAX_DIGITS 18

typedef struct {
    const unsigned char *p, *end;
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

/* The code unit of a \\uXXXX escape at p, or -1 when there is none. */
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
 * invalid or left to Polars (a lone surrogate). */
static size_t escape_len(const unsigned char *p, const unsigned char *end) {
    if (end - p < 2) return 0;
    switch (p[1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': return 2;
    case 'u': {
        int v = escape_at(p, end);
        if (v < 0 || (v >= 0xdc00 && v <= 0xdfff)) return 0;
        if (v < 0xd800 || v > 0xdbff) return 6;
        int low = escape_at(p + 6, end);
        return low >= 0xdc00 && low <= 0xdfff ? 12 : 0;
    }
    default: return 0;
    }
}

#if defined(__SSE2__)
/* Bit i: byte i of the 64 at p is a quote, a backslash or a control character. */
static inline uint64_t stops64(const unsigned char *p) {
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
    const __m128i control = _mm_set1_epi8(0x1f);
    uint64_t stops = 0;
    for (int k = 0; k < 4; k++) {
        __m128i b = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, slash));
        stop = _mm_or_si128(stop, _mm_cmpeq_epi8(_mm_max_epu8(b, control), control));
        stops |= (uint64_t)(unsigned)_mm_movemask_epi8(stop) << (16 * k);
    }
    return stops;
}
#endif

/* A string at c->p (its opening quote); 1 and past it when valid. `escaped`: set when it
 * holds an escape (may be NULL). Plain bytes are passed over 64 at a time (SSE2). */
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
            if (p[i] != '\\') return 0; /* a raw control character */
            if (escaped) *escaped = 1;
            size_t n = escape_len(p + i, end);
            if (!n) return 0;
            if (i + n >= 64) {
                next = i + n;
                break;
            }
            stops &= ~((1ULL << (i + n)) - 1); /* past the escape (it may hold a quote) */
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
        if (b < 0x20) return 0;
        if (b != '\\') {
            p++;
            continue;
        }
        if (escaped) *escaped = 1;
        size_t n = escape_len(p, end);
        if (!n) return 0;
        p += n;
    }
}

static int digits(Cur *c, int most) {
    int n = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++, n++;
    return n >= 1 && n <= most;
}

/* An integer literal of at most MAX_DIGITS digits, not followed by a fraction or exponent. */
static int integer_at(Cur *c) {
    if (c->p < c->end && *c->p == '-') c->p++;
    const unsigned char *first = c->p;
    if (!digits(c, MAX_DIGITS)) return 0;
    if (*first == '0' && c->p - first > 1) return 0;
    return !(c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E'));
}

static int number_at(Cur *c) {
    if (c->p < c->end && *c->p == '-') c->p++;
    const unsigned char *first = c->p;
    if (!digits(c, MAX_DIGITS) || (*first == '0' && c->p - first > 1)) return 0;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (!digits(c, MAX_DIGITS)) return 0;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
        if (!digits(c, 2)) return 0;
    }
    return 1;
}

static int literal_at(Cur *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n)) return 0;
    c->p += n;
    return 1;
}

static int value_at(Cur *c, int depth);

/* An object or array at c->p whose members are `member`s separated by commas. */
static int members_at(Cur *c, int depth, unsigned char close) {
    if (depth > MAX_DEPTH) return 0;
    c->p++;
    skip_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 1;
    }
    for (;;) {
        if (close == '}') {
            if (c->p >= c->end || *c->p != '"' || !string_at(c, NULL)) return 0;
            skip_ws(c);
            if (c->p >= c->end || *c->p != ':') return 0;
            c->p++;
            skip_ws(c);
        }
        if (!value_at(c, depth + 1)) return 0;
        skip_ws(c);
        if (c->p >= c->end) return 0;
        if (*c->p == close) {
            c->p++;
            return 1;
        }
        if (*c->p != ',') return 0;
        c->p++;
        skip_ws(c);
    }
}

static int value_at(Cur *c, int depth) {
    if (c->p >= c->end) return 0;
    switch (*c->p) {
    case '"': return string_at(c, NULL);
    case '{': return members_at(c, depth, '}');
    case '[': return members_at(c, depth, ']');
    case 't': return literal_at(c, "true");
    case 'f': return literal_at(c, "false");
    case 'n': return literal_at(c, "null");
    default: return number_at(c);
    }
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
        if (which < 0) {
            if (!value_at(c, 1)) return 0;
        } else {
            if (seen[which]++) return 0;
            int ok = fields[which].integer ? integer_at(c)
                                           : c->p < c->end && *c->p == '"' && string_at(c, NULL);
            if (!ok) return 0;
        }
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

static int rows_clean_in(const unsigned char *data, size_t size, const Field *fields,
                         int n_fields) {
    Cur c = {data, data + size};
    while (c.p < c.end)
        if (!row_at(&c, fields, n_fields)) return 0;
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

PyDoc_STRVAR(rows_clean_doc,
             "rows_clean(data, strings, ints) -> bool\n\n"
             "Whether every line of data is certainly a JSON object with each key of strings "
             "(a tuple of bytes) once as a string and each key of ints once as an integer of at "
             "most 18 digits; False leaves the answer to a full parse.");

static PyObject *rows_clean(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    PyObject *strings, *ints;
    if (!PyArg_ParseTuple(args, "y*OO", &data, &strings, &ints)) return NULL;
    Field fields[MAX_FIELDS];
    int n_fields = 0, clean = 0;
    PyObject *result = NULL;
    if (add_fields(strings, 0, fields, &n_fields) && add_fields(ints, 1, fields, &n_fields)) {
        Py_BEGIN_ALLOW_THREADS
        clean = rows_clean_in(data.buf, (size_t)data.len, fields, n_fields);
        Py_END_ALLOW_THREADS
        result = PyBool_FromLong(clean);
    }
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"rows_clean", rows_clean, METH_VARARGS, rows_clean_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_jsoncheck",
    .m_doc = "Whether every line of a chunk file is certainly a row Polars reads whole.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__jsoncheck(void) { return PyModule_Create(&module); }
