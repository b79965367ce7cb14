/* wasm_printf: the module's own snprintf and vsnprintf, linked into the WebAssembly module only
 * (server/wasm/CMakeLists.txt; natively the C library's serve).
 *
 * Why: the journal's reader and the world's image loader say why they refuse bytes with snprintf,
 * and wasi-libc's snprintf is musl's vfprintf, which brings stdio's files along (the module would
 * import WASI's fd_write, fd_seek and fd_close: it must import nothing, docs/wasm.md) and float
 * formatting (52 KB of the module). These texts need only what is below: flags '-' and '0', a
 * width, a precision for strings, the length modifiers l ll z j t, and the conversions
 * d i u x X c s %. A conversion outside that ends the text there (nothing is read past it), so
 * a format this file does not know shows as cut, never as garbage. Output is byte for byte
 * glibc's for what it knows (js_journal_player compares the module's texts with the native
 * replay's). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sink {
    char *p;     /* the next byte written */
    size_t room; /* bytes left, the terminator's included */
    size_t n;    /* bytes the whole text takes */
} sink;

static void put(sink *o, char c) {
    if (o->room > 1) {
        *o->p++ = c;
        o->room--;
    }
    o->n++;
}

/* digits (most significant first, len of them) padded to width. */
static void put_field(sink *o, const char *digits, size_t len, const char *sign, int width,
                      bool left, bool zero) {
    size_t slen = sign ? 1 : 0;
    size_t pad = width > 0 && (size_t)width > len + slen ? (size_t)width - len - slen : 0;
    if (!left && !zero)
        for (; pad; pad--)
            put(o, ' ');
    if (sign) put(o, *sign);
    if (!left && zero)
        for (; pad; pad--)
            put(o, '0');
    for (size_t i = 0; i < len; i++)
        put(o, digits[i]);
    for (; pad; pad--)
        put(o, ' ');
}

static void put_unsigned(sink *o, uint64_t v, unsigned base, bool upper, const char *sign,
                         int width, bool left, bool zero) {
    char buf[24];
    size_t len = 0;
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        buf[sizeof buf - 1 - len++] = dig[v % base];
        v /= base;
    } while (v);
    put_field(o, buf + sizeof buf - len, len, sign, width, left, zero);
}

int vsnprintf(char *restrict s, size_t size, const char *restrict fmt, va_list ap) {
    sink o = {s, size, 0};
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            put(&o, *f);
            continue;
        }
        bool left = false, zero = false;
        for (f++; *f == '-' || *f == '0'; f++) {
            if (*f == '-') left = true;
            if (*f == '0') zero = true;
        }
        int width = 0, precision = -1;
        for (; *f >= '0' && *f <= '9'; f++)
            width = width * 10 + (*f - '0');
        if (*f == '.')
            for (f++, precision = 0; *f >= '0' && *f <= '9'; f++)
                precision = precision * 10 + (*f - '0');
        enum { INT, LONG, LLONG, SIZE, MAX, PTRDIFF } len = INT;
        if (*f == 'l') {
            len = f[1] == 'l' ? LLONG : LONG;
            f += f[1] == 'l' ? 2 : 1;
        } else if (*f == 'z' || *f == 'j' || *f == 't') {
            len = *f == 'z' ? SIZE : *f == 'j' ? MAX : PTRDIFF;
            f++;
        }
        switch (*f) {
        case 'd':
        case 'i': {
            int64_t v = len == LLONG     ? va_arg(ap, long long)
                        : len == LONG    ? va_arg(ap, long)
                        : len == SIZE    ? (int64_t)va_arg(ap, size_t)
                        : len == MAX     ? va_arg(ap, intmax_t)
                        : len == PTRDIFF ? va_arg(ap, ptrdiff_t)
                                         : va_arg(ap, int);
            uint64_t mag = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
            put_unsigned(&o, mag, 10, false, v < 0 ? "-" : NULL, width, left, zero);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            uint64_t v = len == LLONG     ? va_arg(ap, unsigned long long)
                         : len == LONG    ? va_arg(ap, unsigned long)
                         : len == SIZE    ? va_arg(ap, size_t)
                         : len == MAX     ? va_arg(ap, uintmax_t)
                         : len == PTRDIFF ? (uint64_t)va_arg(ap, ptrdiff_t)
                                          : va_arg(ap, unsigned);
            put_unsigned(&o, v, *f == 'u' ? 10 : 16, *f == 'X', NULL, width, left, zero);
            break;
        }
        case 'c': {
            char c = (char)va_arg(ap, int);
            put_field(&o, &c, 1, NULL, width, left, false);
            break;
        }
        case 's': {
            const char *str = va_arg(ap, const char *);
            if (!str) str = "(null)";
            size_t n = 0;
            while (str[n] && (precision < 0 || n < (size_t)precision))
                n++;
            put_field(&o, str, n, NULL, width, left, false);
            break;
        }
        case '%':
            put(&o, '%');
            break;
        default:
            goto done; /* not known here: the text ends */
        }
    }
done:
    if (size) *o.p = 0;
    return o.n > INT32_MAX ? -1 : (int)o.n;
}

int snprintf(char *restrict s, size_t size, const char *restrict fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, size, fmt, ap);
    va_end(ap);
    return n;
}
