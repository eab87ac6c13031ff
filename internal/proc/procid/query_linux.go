package procid

// procStat: StateLetter reads /proc/PID/stat here.
const procStat = true
