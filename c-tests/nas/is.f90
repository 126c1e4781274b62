! IS in Fortran (`use mpi`): the same kernel as is.c, same output. 2^20
! keys below 2^16 (NPB's generator), bucket sorted over the ranks ITERS
! times: MPI_Allreduce of the bucket counts, contiguous bucket ranges per
! rank, MPI_Alltoall of the send counts, MPI_Alltoallv of the keys, local
! ranking by counting; iteration i first changes two keys, as NPB does.
!
! Rank counts: a power of two up to 1,024.
! prints (rank 0): is: np N keys K maxkey M buckets B
!                  is: iter I ranksum S
!                  is: sorted checksum C
!                  is: verified yes|NO
program is
  use mpi
  implicit none
  integer, parameter :: log_keys = 20, max_key = 65536, nb = 1024, shift = 6, iters = 10
  double precision, parameter :: a = 1220703125d0
  double precision, external :: randlc, skip
  integer :: rank, np, ierr, m, i, b, r, d, it, got, lo, hi, v, k, prev, carry, left, right
  integer :: ok, all_ok, count(0:nb - 1), all(0:nb - 1), start(0:nb - 1), owner(0:nb - 1)
  integer, allocatable :: key(:), sorted(:), recv(:), scount(:), rcount(:), sdispl(:), rdispl(:)
  integer(8), allocatable :: vcount(:)
  integer(8) :: total, run, before, rsum, ranksum, at, check, pos, c, mine(2), sums(2)
  double precision :: seed, x

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call need_ranks(np <= nb .and. iand(np, np - 1) == 0, 'is', np, &
    'the rank count must be a power of two up to 1024')
  total = ishft(1_8, log_keys)
  m = int(total / np)
  allocate (key(0:m - 1), sorted(0:m - 1), recv(0:4 * m - 1), vcount(0:max_key - 1))
  allocate (scount(0:np - 1), rcount(0:np - 1), sdispl(0:np - 1), rdispl(0:np - 1))
  seed = skip(314159265d0, a, 4 * int(m, 8) * rank)
  do i = 0, m - 1
    x = randlc(seed, a)
    x = x + randlc(seed, a)
    x = x + randlc(seed, a)
    x = x + randlc(seed, a)
    key(i) = int(max_key / 4 * x)
  end do
  if (rank == 0) then
    write (*, '(a,i0,a,i0,a,i0,a,i0)') 'is: np ', np, ' keys ', total, ' maxkey ', max_key, ' buckets ', nb
    flush (6)
  end if
  do it = 1, iters
    if (rank == 0) then
      key(it) = it
      key(it + iters) = max_key - it
    end if
    count = 0
    do i = 0, m - 1
      b = ishft(key(i), -shift)
      count(b) = count(b) + 1
    end do
    start(0) = 0
    do b = 1, nb - 1
      start(b) = start(b - 1) + count(b - 1)
    end do
    do i = 0, m - 1
      b = ishft(key(i), -shift)
      sorted(start(b)) = key(i)
      start(b) = start(b) + 1
    end do
    call MPI_Allreduce(count, all, nb, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    run = 0
    r = 0
    do b = 0, nb - 1
      owner(b) = r
      run = run + all(b)
      if (run >= total * (r + 1) / np .and. r < np - 1) r = r + 1
    end do
    scount = 0
    do b = 0, nb - 1
      scount(owner(b)) = scount(owner(b)) + count(b)
    end do
    call MPI_Alltoall(scount, 1, MPI_INTEGER, rcount, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    sdispl(0) = 0
    rdispl(0) = 0
    do d = 1, np - 1
      sdispl(d) = sdispl(d - 1) + scount(d - 1)
      rdispl(d) = rdispl(d - 1) + rcount(d - 1)
    end do
    got = rdispl(np - 1) + rcount(np - 1)
    if (got > 4 * m) then
      write (0, '(a,i0,a,i0,a)') 'is: rank ', rank, ' received ', got, ' keys, over 4 times its share'
      call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    call MPI_Alltoallv(sorted, scount, sdispl, MPI_INTEGER, recv, rcount, rdispl, MPI_INTEGER, &
      MPI_COMM_WORLD, ierr)
    lo = max_key
    hi = 0
    before = 0
    do b = 0, nb - 1
      if (owner(b) < rank) before = before + all(b)
      if (owner(b) == rank) then
        lo = min(lo, ishft(b, shift))
        hi = ishft(b + 1, shift)
      end if
    end do
    if (hi > lo) vcount(lo:hi - 1) = 0
    do i = 0, got - 1
      vcount(recv(i)) = vcount(recv(i)) + 1
    end do
    rsum = 0
    at = before
    do v = lo, hi - 1
      rsum = rsum + vcount(v) * at
      at = at + vcount(v)
    end do
    call MPI_Allreduce(rsum, ranksum, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      write (*, '(a,i0,a,i0)') 'is: iter ', it, ' ranksum ', ranksum
      flush (6)
    end if
  end do
  ! Full verification of the last iteration: the keys in order.
  k = 0
  do v = lo, hi - 1
    do c = 1, vcount(v)
      recv(k) = v
      k = k + 1
    end do
  end do
  ok = merge(1, 0, k == got)
  check = 0
  pos = before
  do i = 0, got - 1
    pos = pos + 1
    check = check + int(recv(i), 8) * pos
  end do
  left = merge(rank - 1, MPI_PROC_NULL, rank > 0)
  right = merge(rank + 1, MPI_PROC_NULL, rank < np - 1)
  carry = -1
  if (got > 0) carry = recv(got - 1)
  prev = -1
  call MPI_Sendrecv(carry, 1, MPI_INTEGER, right, 7, prev, 1, MPI_INTEGER, left, 7, &
    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (got > 0) then
    if (prev > recv(0)) ok = 0
  end if
  mine = (/ check, int(got, 8) /)
  call MPI_Allreduce(mine, sums, 2, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (*, '(a,i0)') 'is: sorted checksum ', sums(1)
    if (all_ok == 1 .and. sums(2) == total) then
      write (*, '(a)') 'is: verified yes'
    else
      write (*, '(a)') 'is: verified NO'
    end if
  end if
  call MPI_Finalize(ierr)
end program is
