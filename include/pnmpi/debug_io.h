/* LLNL PnMPI's print API, for modules written against it: debug messages
 * by level (PNMPI_DBGLEVEL, a bit mask; PNMPI_DBGNODE, the one rank to
 * print on), warnings, and errors that stop the run. Once MPI runs, each
 * line starts with the rank. Define PNMPI_MESSAGE_PREFIX before including
 * this header to name the module in messages; PNMPI_NO_DEBUG drops debug
 * messages at compile time. */
#ifndef PNMPI_DEBUG_IO_H
#define PNMPI_DEBUG_IO_H

#ifdef __cplusplus
extern "C" {
#endif

/* Debug levels: bits of PNMPI_DBGLEVEL. */
typedef enum pnmpi_debug_level {
    PNMPI_DEBUG_INIT = (1 << 0),   /* start-up, before MPI runs */
    PNMPI_DEBUG_MODULE = (1 << 1), /* module loading */
    PNMPI_DEBUG_CALL = (1 << 2)    /* MPI calls' entries and exits */
} PNMPI_debug_level_t;

#ifndef PNMPI_MESSAGE_PREFIX
#define PNMPI_MESSAGE_PREFIX "PnMPI"
#endif

void pnmpi_print_debug(PNMPI_debug_level_t level, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void pnmpi_print_warning(const char *format, ...) __attribute__((format(printf, 1, 2)));
void pnmpi_print_error(const char *prefix, const char *function, int line, const char *format, ...)
    __attribute__((format(printf, 4, 5), noreturn));

#ifndef PNMPI_NO_DEBUG
#define PNMPI_Debug(level, ...) pnmpi_print_debug(level, "[" PNMPI_MESSAGE_PREFIX "] " __VA_ARGS__)
#else
#define PNMPI_Debug(...)
#endif
#define PNMPI_Warning(...) pnmpi_print_warning("[" PNMPI_MESSAGE_PREFIX "] " __VA_ARGS__)
#define PNMPI_Error(...) pnmpi_print_error(PNMPI_MESSAGE_PREFIX, __func__, __LINE__, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
