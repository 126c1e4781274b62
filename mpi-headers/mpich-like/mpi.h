/* Imitates MPICH 4.0's mpi.h quirks for stubgen's tests. */
#ifndef FAKE_MPICH_MPI_H
#define FAKE_MPICH_MPI_H
#include <stdint.h>
#define MPICH_VERSION "4.0.2"
#if defined(__has_attribute)
#if __has_attribute(pointer_with_type_tag) && !defined(MPICH_NO_ATTR_TYPE_TAGS)
#define MPICH_ATTR_POINTER_WITH_TYPE_TAG(buffer_idx, type_idx) \
    __attribute__((pointer_with_type_tag(MPI, buffer_idx, type_idx)))
#endif
#endif
#if !defined(MPICH_ATTR_POINTER_WITH_TYPE_TAG)
#define MPICH_ATTR_POINTER_WITH_TYPE_TAG(buffer_idx, type_idx)
#endif
#define MPICH_API_PUBLIC __attribute__((visibility("default")))
typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Request;
typedef int MPI_Fint;
typedef long MPI_Aint;
typedef long MPI_Count;
typedef struct MPI_Status {
    int count_lo;
    int count_hi_and_cancelled;
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
} MPI_Status;
typedef struct {
    MPI_Fint count_lo;
    MPI_Fint count_hi_and_cancelled;
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
} MPI_F08_status;
typedef struct MPI_T_enum_s *MPI_T_enum;
typedef void (MPI_User_function)(void *, void *, int *, MPI_Datatype *);
#include "mpi_proto.h"
#endif
