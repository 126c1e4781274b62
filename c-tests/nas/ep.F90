! EP in Fortran (`use mpi`, or `use mpi_f08` when built with -DF08: the
! same calls compile against both): the same kernel as ep.c, same output.
! Gaussian pairs by the polar method from NPB's randlc, in 2^LOG2_BATCHES
! batches of 1,024 pairs; the ranks take contiguous blocks of batches
! (any rank count), then MPI_Allreduce the sums and the counts per annulus.
!
! usage: ep [LOG2_BATCHES]   (default 14)
! prints (rank 0): ep: np N pairs P gaussians G sx SX sy SY
!                  ep: counts Q0 ... Q9
!                  ep: verified yes|NO
program ep
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer, parameter :: batch_log = 10, nq = 10
  double precision, parameter :: a = 1220703125d0
  double precision, external :: randlc, skip
  integer, external :: int_arg
  integer :: rank, np, ierr, log_batches, l
  integer(8) :: batches, pairs, first, last, k, i
  double precision :: jump, seed, x1, x2, t, f, gx, gy, g
  double precision :: sums(2), total(2), q(0:nq - 1), counts(0:nq - 1)
  double precision, allocatable :: x(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  log_batches = int_arg(14)
  call need_ranks(log_batches >= 0 .and. log_batches <= 30, 'ep', np, 'LOG2_BATCHES must be 0 to 30')
  batches = ishft(1_8, log_batches)
  pairs = ishft(1_8, batch_log)
  first = batches * rank / np
  last = batches * (rank + 1) / np
  jump = skip(1d0, a, 2 * pairs)
  allocate (x(0:2 * pairs - 1))
  sums = 0
  q = 0
  do k = first, last - 1
    seed = skip(271828183d0, jump, k)
    do i = 0, 2 * pairs - 1
      x(i) = randlc(seed, a)
    end do
    do i = 0, pairs - 1
      x1 = 2 * x(2 * i) - 1
      x2 = 2 * x(2 * i + 1) - 1
      t = x1 * x1 + x2 * x2
      if (t <= 1 .and. t > 0) then
        f = sqrt(-2 * log(t) / t)
        gx = x1 * f
        gy = x2 * f
        l = min(int(max(abs(gx), abs(gy))), nq - 1)
        q(l) = q(l) + 1
        sums(1) = sums(1) + gx
        sums(2) = sums(2) + gy
      end if
    end do
  end do
  call MPI_Allreduce(sums, total, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(q, counts, nq, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    g = sum(counts)
    write (*, '(a,i0,a,i0,a,i0,a,es23.15,a,es23.15)') 'ep: np ', np, ' pairs ', batches * pairs, &
      ' gaussians ', nint(g, 8), ' sx ', total(1), ' sy ', total(2)
    write (*, '(a,10(1x,i0))') 'ep: counts', nint(counts, 8)
    if (g > 0.78d0 * batches * pairs .and. g < 0.79d0 * batches * pairs) then
      write (*, '(a)') 'ep: verified yes'
    else
      write (*, '(a)') 'ep: verified NO'
    end if
    flush (6)
  end if
  call MPI_Finalize(ierr)
end program ep
