! CG in Fortran (`include 'mpif.h'`, the state in a COMMON block as NPB's
! CG keeps it): the same kernel as cg.c, same output. The inverse power
! method on a sparse symmetric positive definite matrix (row i: the
! diagonal and columns i +- OFF(k) mod n, values drawn from the pair), rows
! in blocks; the sparse product gathers the direction with MPI_Allgather,
! the dot products are MPI_Allreduce.
!
! Rank counts: a power of two up to n.
! usage: cg [LOG2_N]   (default 13: n = 8192)
! prints (rank 0): cg: np N n ROWS nonzeros NNZ
!                  cg: iter I zeta Z   (each outer iteration)
!                  cg: verified yes|NO (the last residual is below 1e-3)
program cg
  implicit none
  include 'mpif.h'
  integer, parameter :: outer = 2, cg_iters = 10, noff = 6, per = 2 * noff + 1
  double precision, parameter :: shift = 10d0
  integer(8), parameter :: off(noff) = (/ 1_8, 7_8, 61_8, 359_8, 1021_8, 2039_8 /)
  integer(8) :: n, row0
  integer :: m, rank, np
  common /cgstate/ n, row0, m, rank, np
  double precision, external :: pair_value, dot
  integer, external :: int_arg
  integer :: ierr, log_n, r, k, s, it, cgit
  integer(8) :: gi, j
  integer, allocatable :: col(:, :)
  double precision, allocatable :: val(:, :), x(:), z(:), rr(:), p(:), q(:), pfull(:)
  double precision :: offsum, v, rho, rho0, alpha, rnorm, zeta, znorm

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  log_n = int_arg(13)
  n = ishft(1_8, log_n)
  call need_ranks(log_n >= 12 .and. log_n <= 24 .and. np <= n .and. iand(np, np - 1) == 0, 'cg', np, &
    'the rank count must be a power of two up to n, and LOG2_N 12 to 24')
  m = int(n / np)
  row0 = int(m, 8) * rank
  allocate (col(0:per - 1, 0:m - 1), val(0:per - 1, 0:m - 1))
  allocate (x(0:m - 1), z(0:m - 1), rr(0:m - 1), p(0:m - 1), q(0:m - 1), pfull(0:n - 1))
  do r = 0, m - 1
    gi = row0 + r
    offsum = 0
    do k = 1, noff
      do s = 0, 1
        if (s == 1) then
          j = mod(gi + off(k), n)
        else
          j = mod(gi - off(k) + n, n)
        end if
        v = -pair_value(gi, j)
        col(2 * k - 1 + s, r) = int(j)
        val(2 * k - 1 + s, r) = v
        offsum = offsum - v
      end do
    end do
    col(0, r) = int(gi)
    val(0, r) = offsum + 0.1d0 + pair_value(gi, gi)
  end do
  x = 1
  if (rank == 0) then
    write (*, '(a,i0,a,i0,a,i0)') 'cg: np ', np, ' n ', n, ' nonzeros ', n * per
    flush (6)
  end if
  rnorm = 0
  do it = 1, outer
    z = 0
    rr = x
    p = x
    rho = dot(rr, rr)
    do cgit = 1, cg_iters
      call MPI_Allgather(p, m, MPI_DOUBLE_PRECISION, pfull, m, MPI_DOUBLE_PRECISION, &
        MPI_COMM_WORLD, ierr)
      call spmv()
      alpha = rho / dot(p, q)
      z = z + alpha * p
      rr = rr - alpha * q
      rho0 = rho
      rho = dot(rr, rr)
      p = rr + rho / rho0 * p
    end do
    call MPI_Allgather(z, m, MPI_DOUBLE_PRECISION, pfull, m, MPI_DOUBLE_PRECISION, &
      MPI_COMM_WORLD, ierr)
    call spmv()
    q = x - q
    rnorm = sqrt(dot(q, q))
    zeta = shift + 1 / dot(x, z)
    znorm = 1 / sqrt(dot(z, z))
    x = znorm * z
    if (rank == 0) then
      write (*, '(a,i0,a,es23.15)') 'cg: iter ', it, ' zeta ', zeta
      flush (6)
    end if
  end do
  if (rank == 0) then
    if (rnorm < 1d-3) then
      write (*, '(a)') 'cg: verified yes'
    else
      write (*, '(a)') 'cg: verified NO'
    end if
  end if
  call MPI_Finalize(ierr)
contains
  ! q = A times the gathered vector (pfull).
  subroutine spmv()
    integer :: row, kk
    double precision :: acc
    do row = 0, m - 1
      acc = 0
      do kk = 0, per - 1
        acc = acc + val(kk, row) * pfull(col(kk, row))
      end do
      q(row) = acc
    end do
  end subroutine spmv
end program cg

! A pseudo-random value in (0, 1) for the unordered pair (i, j), as cg.c.
double precision function pair_value(i, j)
  implicit none
  integer(8), intent(in) :: i, j
  double precision, external :: randlc
  double precision, parameter :: a = 1220703125d0
  double precision :: seed, dummy
  seed = dble(2 * (min(i, j) * 8191 + max(i, j) * 131071) + 1)
  dummy = randlc(seed, a)
  pair_value = randlc(seed, a)
end function pair_value

! The global dot product of two local blocks (MPI_Allreduce); the block
! length comes from the COMMON block.
double precision function dot(a, b)
  implicit none
  include 'mpif.h'
  integer(8) :: n, row0
  integer :: m, rank, np
  common /cgstate/ n, row0, m, rank, np
  double precision, intent(in) :: a(0:m - 1), b(0:m - 1)
  double precision :: local
  integer :: i, ierr
  local = 0
  do i = 0, m - 1
    local = local + a(i) * b(i)
  end do
  call MPI_Allreduce(local, dot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
end function dot
