/* LLNL PnMPI's print API (pnmpi/debug_io.h) for modules built against it:
 * the variadic part, which stable Rust cannot write. Each formats its
 * message and hands it to pnmpi_llnl_emit (src/print.rs), which adds the
 * rank, filters debug messages and stops the run on an error. The exported
 * names are naked trampolines in src/print.rs that jump here with the
 * caller's registers intact. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pnmpi_llnl_emit(int kind, int level, const char *text);

/* The message, formatted; NULL if memory ran out. */
static char *format_v(const char *head, const char *format, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, format, again);
    va_end(again);
    size_t h = strlen(head);
    char *text = malloc(h + (n > 0 ? (size_t)n : 0) + 1);
    if (!text)
        return NULL;
    memcpy(text, head, h);
    vsnprintf(text + h, (n > 0 ? (size_t)n : 0) + 1, format, ap);
    return text;
}

void pnmpi_c_print_debug(int level, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char *text = format_v("", format, ap);
    va_end(ap);
    pnmpi_llnl_emit(0, level, text ? text : format);
    free(text);
}

void pnmpi_c_print_warning(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char *text = format_v("", format, ap);
    va_end(ap);
    pnmpi_llnl_emit(1, 0, text ? text : format);
    free(text);
}

void pnmpi_c_print_error(const char *prefix, const char *function, int line, const char *format, ...)
{
    char head[512];
    snprintf(head, sizeof head, "[%s] %s:%d: ", prefix ? prefix : "PnMPI", function ? function : "?", line);
    va_list ap;
    va_start(ap, format);
    char *text = format_v(head, format, ap);
    va_end(ap);
    pnmpi_llnl_emit(2, 0, text ? text : format);
    free(text);
}
