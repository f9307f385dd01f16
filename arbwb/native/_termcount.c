/* arbwb.native._termcount: spec §7.1 term counts of a batch of texts in one pass over their UTF-8 bytes.
 *
 * A token is a maximal run of ASCII letters and digits, also cut between a lower-case and a
 * following upper-case ASCII letter, lower-cased (exactly arbwb.tokenize.split_identifiers;
 * every byte of a non-ASCII character is >= 0x80, so it only separates tokens). Each token is
 * hashed where it is found and numbered in order of first appearance in the batch (the
 * numbering pyarrow's dictionary_encode gives), and each text's distinct tokens are counted,
 * so no per-token array is ever built. This replaces numpy token masks, an Arrow hash and a
 * sort of (text, token) keys, which cost about twice the CPU (the lexical/BM25 cold path is
 * CPU-bound). arbwb-defined speed-up; tests/test_termcount.py checks it against the splitter.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;
    size_t size; /* bytes used */
    size_t cap;  /* bytes allocated */
} Buf;

/* Room for `more` bytes past the end of `buf` (doubling); 0 when memory ran out. */
static int buf_reserve(Buf *buf, size_t more) {
    if (buf->size + more <= buf->cap) return 1;
    size_t cap = buf->cap ? buf->cap : 4096;
    while (cap < buf->size + more) cap *= 2;
    char *data = realloc(buf->data, cap);
    if (!data) return 0;
    buf->data = data;
    buf->cap = cap;
    return 1;
}

#define PUSH(buf, type, value)                                                           \
    (buf_reserve(&(buf), sizeof(type))                                                   \
         ? (*(type *)((buf).data + (buf).size) = (value), (buf).size += sizeof(type), 1) \
         : 0)

/* What the counter keeps of a distinct token (one cache line holds two). */
typedef struct {
    uint64_t hash;
    uint64_t head; /* its first 8 bytes, lower-cased, zero-padded: the whole of a short token */
    int64_t end;   /* the end of its bytes in Vocab.bytes (its start: the previous token's end) */
    int32_t text;  /* 1 + the last text it was counted in (0: none yet) */
    int32_t entry; /* its entry (index into cols and freq) in that text */
} Term;

typedef struct {
    uint64_t *slots; /* per slot: the hash's high 32 bits << 32 | (id + 1); 0 when empty */
    size_t mask;     /* slots - 1 (a power of two) */
    Buf terms;       /* Term per token id */
    Buf bytes;       /* the distinct tokens' lower-cased bytes, in id order */
    int32_t n;       /* distinct tokens */
} Vocab;

#define TAG 0xffffffff00000000ULL
#define LOWERING 0x2020202020202020ULL /* | lower-cases a letter; digits have the bit */

/* A table of `size` slots (a power of two) holding every token so far; 0 when out of memory. */
static int vocab_slots(Vocab *v, size_t size) {
    uint64_t *slots = calloc(size, sizeof(uint64_t));
    if (!slots) return 0;
    const Term *terms = (const Term *)v->terms.data;
    for (int32_t id = 0; id < v->n; id++) {
        size_t s = terms[id].hash & (size - 1);
        while (slots[s]) s = (s + 1) & (size - 1);
        slots[s] = (terms[id].hash & TAG) | (uint64_t)(id + 1);
    }
    free(v->slots);
    v->slots = slots;
    v->mask = size - 1;
    return 1;
}

/* Whether the bytes of a known token equal, from the ninth on, the `len` at `text` lower-cased. */
static int same_tail(const unsigned char *known, const unsigned char *text, size_t len) {
    for (size_t k = 8; k < len; k++)
        if (known[k] != (text[k] | 0x20)) return 0;
    return 1;
}

/* The id of the token of `len` bytes at `text` with this hash and head, added when new; -1
 * when memory ran out. */
static int32_t vocab_id(Vocab *v, const unsigned char *text, size_t len, uint64_t hash,
                        uint64_t head) {
    const Term *terms = (const Term *)v->terms.data;
    size_t s = hash & v->mask;
    for (uint64_t slot; (slot = v->slots[s]) != 0; s = (s + 1) & v->mask) {
        if ((slot & TAG) != (hash & TAG)) continue;
        int32_t id = (int32_t)(slot & ~TAG) - 1;
        const Term *t = terms + id;
        if (t->head != head) continue;
        int64_t begin = id ? t[-1].end : 0;
        if (t->end - begin != (int64_t)len) continue;
        const unsigned char *known = (const unsigned char *)v->bytes.data + begin;
        if (len <= 8 || same_tail(known, text, len)) return id;
    }
    int32_t id = v->n;
    if (!buf_reserve(&v->bytes, len)) return -1;
    unsigned char *out = (unsigned char *)v->bytes.data + v->bytes.size;
    for (size_t k = 0; k < len; k++) out[k] = text[k] | 0x20;
    v->bytes.size += len;
    Term term = {hash, head, (int64_t)v->bytes.size, 0, 0};
    if (!PUSH(v->terms, Term, term)) return -1;
    v->slots[s] = (hash & TAG) | (uint64_t)(id + 1);
    v->n++;
    if ((size_t)v->n * 2 > v->mask + 1 && !vocab_slots(v, (v->mask + 1) * 2)) return -1;
    return id;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* Bit i: whether byte i of 16 lies in [lo, lo + n) (unsigned, by a signed compare). */
static inline uint64_t in_range16(__m128i bytes, int lo, int n) {
    __m128i shifted = _mm_sub_epi8(bytes, _mm_set1_epi8((char)(lo + 128)));
    return (uint64_t)_mm_movemask_epi8(_mm_cmplt_epi8(shifted, _mm_set1_epi8((char)(n - 128))));
}

/* Bit i of *alnum, *lower, *upper: the class of byte i of the 64 at p. */
static inline void classes64(const unsigned char *p, uint64_t *alnum, uint64_t *lower,
                             uint64_t *upper) {
    uint64_t a = 0, l = 0, u = 0;
    for (int k = 0; k < 4; k++) {
        __m128i bytes = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        uint64_t lo = in_range16(bytes, 'a', 26), up = in_range16(bytes, 'A', 26);
        l |= lo << (16 * k);
        u |= up << (16 * k);
        a |= (lo | up | in_range16(bytes, '0', 10)) << (16 * k);
    }
    *alnum = a, *lower = l, *upper = u;
}
#else
static inline void classes64(const unsigned char *p, uint64_t *alnum, uint64_t *lower,
                             uint64_t *upper) {
    uint64_t a = 0, l = 0, u = 0;
    for (int i = 0; i < 64; i++) {
        unsigned char b = p[i];
        l |= (uint64_t)((unsigned char)(b - 'a') < 26) << i;
        u |= (uint64_t)((unsigned char)(b - 'A') < 26) << i;
        a |= (uint64_t)((unsigned char)(b - '0') < 10) << i;
    }
    *alnum = a | l | u, *lower = l, *upper = u;
}
#endif

/* Append the positions of set bits of `bits` plus `base` to `out` (int64, room for 64). */
static inline void push_bits(Buf *out, uint64_t bits, int64_t base) {
    int64_t *at = (int64_t *)(out->data + out->size);
    size_t n = 0;
    for (; bits; bits &= bits - 1) at[n++] = base + __builtin_ctzll(bits);
    out->size += n * sizeof(int64_t);
}

/* The tokens of the n bytes at p: their starts and ends (exclusive) into `starts` and `ends`
 * (emptied first), found 64 bytes at a time as bit masks, so no branch waits on a byte.
 * 0 when memory ran out. */
static int find_tokens(const unsigned char *p, size_t n, Buf *starts, Buf *ends) {
    starts->size = ends->size = 0;
    uint64_t last_alnum = 0, last_lower = 0; /* of the byte before the 64 (bit 0) */
    for (size_t base = 0; base < n; base += 64) {
        uint64_t alnum, lower, upper;
        if (n - base >= 64) {
            classes64(p + base, &alnum, &lower, &upper);
        } else { /* the tail, zero-padded: a zero byte is in no class */
            unsigned char tail[64] = {0};
            memcpy(tail, p + base, n - base);
            classes64(tail, &alnum, &lower, &upper);
        }
        uint64_t before = alnum << 1 | last_alnum, camel = (lower << 1 | last_lower) & upper;
        if (!buf_reserve(starts, 64 * sizeof(int64_t)) || !buf_reserve(ends, 65 * sizeof(int64_t)))
            return 0;
        push_bits(ends, before & (~alnum | camel), (int64_t)base); /* a token ended before */
        push_bits(starts, alnum & (~before | camel), (int64_t)base);
        last_alnum = alnum >> 63, last_lower = lower >> 63;
    }
    if (n % 64 == 0 && last_alnum) push_bits(ends, 1, (int64_t)n); /* ends with the 64th byte */
    return 1;
}

static inline uint64_t mix(uint64_t hash, uint64_t word) {
    hash = (hash ^ word) * 0x9e3779b97f4a7c15ULL;
    return hash ^ (hash >> 29);
}

/* The n <= 8 bytes at p, lower-cased, as a little-endian word padded with zero bytes;
 * `stop` is where the readable data ends. */
static inline uint64_t word_at(const unsigned char *p, size_t n, const unsigned char *stop) {
    uint64_t word = 0;
    if (stop - p >= 8) {
        memcpy(&word, p, 8);
        if (n < 8) word &= (1ULL << (8 * n)) - 1;
    } else {
        memcpy(&word, p, n);
    }
    return word | (LOWERING & (n < 8 ? (1ULL << (8 * n)) - 1 : ~0ULL));
}

/* A column of texts: text i is raw[offsets[i], offsets[i + 1]). */
typedef struct {
    const unsigned char *raw, *stop; /* its bytes, and where they end */
    const int64_t *offsets;
} Column;

#define MAX_COLUMNS 8

/* Count the tokens of each row of texts, a row being its texts in the `n_cols` columns one
 * after the other (no token spans two: as if joined by spaces); 0 when memory ran out. */
static int count_texts(const Column *columns, int n_cols, Py_ssize_t n_texts, Vocab *v,
                       Buf *nnz, Buf *cols, Buf *freq, Buf *tokens, Buf *starts, Buf *ends) {
    for (Py_ssize_t row = 0; row < n_texts; row++) {
        size_t first = cols->size / sizeof(int32_t);
        int64_t n_tokens = 0;
        for (int col = 0; col < n_cols; col++) {
            const Column *column = columns + col;
            const unsigned char *p = column->raw + column->offsets[row];
            size_t size = (size_t)(column->offsets[row + 1] - column->offsets[row]);
            if (!find_tokens(p, size, starts, ends)) return 0;
            size_t n_found = starts->size / sizeof(int64_t);
            for (size_t k = 0; k < n_found; k++) {
                const unsigned char *start = p + ((int64_t *)starts->data)[k];
                size_t len = (size_t)(((int64_t *)ends->data)[k] - ((int64_t *)starts->data)[k]);
                uint64_t head = word_at(start, len < 8 ? len : 8, column->stop);
                uint64_t hash = mix(0, head);
                for (size_t j = 8; j < len; j += 8)
                    hash = mix(hash, word_at(start + j, len - j < 8 ? len - j : 8, column->stop));
                int32_t id = vocab_id(v, start, len, hash, head);
                if (id < 0) return 0;
                n_tokens++;
                Term *term = (Term *)v->terms.data + id;
                if (term->text == row + 1) {
                    ((int32_t *)freq->data)[term->entry]++;
                    continue;
                }
                term->text = (int32_t)row + 1;
                term->entry = (int32_t)(cols->size / sizeof(int32_t));
                if (!PUSH(*cols, int32_t, id) || !PUSH(*freq, int32_t, 1)) return 0;
            }
        }
        if (!PUSH(*nnz, int64_t, (int64_t)(cols->size / sizeof(int32_t) - first)) ||
            !PUSH(*tokens, int64_t, n_tokens))
            return 0;
    }
    return 1;
}

static PyObject *as_bytes(const Buf *buf) {
    return PyBytes_FromStringAndSize(buf->data ? buf->data : "", (Py_ssize_t)buf->size);
}

/* The vocabulary's Arrow offsets (0, then each token's end) as bytes. */
static PyObject *vocab_offsets(const Vocab *v) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(v->n + 1) * 8);
    if (!out) return NULL;
    int64_t *ends = (int64_t *)PyBytes_AS_STRING(out);
    const Term *terms = (const Term *)v->terms.data;
    ends[0] = 0;
    for (int32_t id = 0; id < v->n; id++) ends[id + 1] = terms[id].end;
    return out;
}

PyDoc_STRVAR(count_doc,
             "count(data, offsets, ...) -> (nnz, cols, freq, tokens, vocab_offsets, vocab_bytes)"
             "\n\nTerm counts of the texts data[offsets[i]:offsets[i + 1]] (offsets: int64, "
             "non-decreasing, within data); with several (data, offsets) columns of as many "
             "texts, text i is their texts i one after the other (no token spans two). Each "
             "text's distinct tokens come in order of first "
             "appearance in it: nnz (int64 per text) of them, with their ids (cols, int32, "
             "numbered by first appearance in the batch) and counts (freq, int32); tokens "
             "(int64 per text) is its token count. The vocabulary is an Arrow large_binary "
             "array's offsets (int64, n + 1) and bytes, in id order. Every result is bytes.");

/* The results of count() for validated offsets, or NULL with an exception set. */
static PyObject *count_valid(const Column *columns, int n_cols, Py_ssize_t n_texts) {
    PyObject *result = NULL;
    Vocab v = {0};
    Buf nnz = {0}, cols = {0}, freq = {0}, tokens = {0}, starts = {0}, ends = {0};
    int ok = vocab_slots(&v, 4096);
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        ok = count_texts(columns, n_cols, n_texts, &v, &nnz, &cols, &freq, &tokens, &starts,
                         &ends);
        Py_END_ALLOW_THREADS
    }
    if (ok)
        result = Py_BuildValue("(NNNNNN)", as_bytes(&nnz), as_bytes(&cols), as_bytes(&freq),
                               as_bytes(&tokens), vocab_offsets(&v), as_bytes(&v.bytes));
    else
        PyErr_NoMemory();
    free(v.slots);
    free(v.terms.data);
    free(v.bytes.data);
    free(nnz.data);
    free(cols.data);
    free(freq.data);
    free(tokens.data);
    free(starts.data);
    free(ends.data);
    return result;
}

/* Whether `offs` holds n_texts + 1 int64 offsets into `data` (non-decreasing); else 0 with
 * ValueError set. n_texts < 0: take its count from offs (then stored there). */
static int valid_column(const Py_buffer *data, const Py_buffer *offs, int col,
                        Py_ssize_t *n_texts) {
    Py_ssize_t n = offs->len / (Py_ssize_t)sizeof(int64_t) - 1;
    const int64_t *offsets = (const int64_t *)offs->buf;
    if (offs->len % (Py_ssize_t)sizeof(int64_t) || n < 0 || (*n_texts >= 0 && n != *n_texts)) {
        PyErr_Format(PyExc_ValueError, "column %d: expected one more offset than texts", col);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (offsets[i] < 0 || offsets[i] > offsets[i + 1] || offsets[i + 1] > data->len) {
            PyErr_Format(PyExc_ValueError, "column %d, offsets[%zd]: text outside the data",
                         col, i);
            return 0;
        }
    }
    *n_texts = n;
    return 1;
}

static PyObject *count(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t n_args = PyTuple_GET_SIZE(args);
    if (n_args < 2 || n_args % 2 || n_args > 2 * MAX_COLUMNS) {
        PyErr_SetString(PyExc_TypeError, "count(data, offsets, ...): 1 to 8 pairs");
        return NULL;
    }
    int n_cols = (int)(n_args / 2), held = 0, valid = 1;
    Py_buffer buffers[2 * MAX_COLUMNS];
    Column columns[MAX_COLUMNS];
    Py_ssize_t n_texts = -1;
    for (; held < n_args && valid; held++) {
        valid = PyObject_GetBuffer(PyTuple_GET_ITEM(args, held), buffers + held, PyBUF_SIMPLE) == 0;
        if (!valid) break;
        if (held % 2) {
            const Py_buffer *data = buffers + held - 1, *offs = buffers + held;
            valid = valid_column(data, offs, (int)(held / 2), &n_texts);
            columns[held / 2] = (Column){data->buf, (const unsigned char *)data->buf + data->len,
                                         offs->buf};
        }
    }
    PyObject *result = valid ? count_valid(columns, n_cols, n_texts) : NULL;
    for (int k = 0; k < held; k++) PyBuffer_Release(buffers + k);
    return result;
}

static PyMethodDef methods[] = {
    {"count", count, METH_VARARGS, count_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_termcount",
    .m_doc = "Spec §7.1 term counts of a batch of texts in one pass over their UTF-8 bytes.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__termcount(void) { return PyModule_Create(&module); }
