# plots/nic_table.awk CONFIG.TXT RUNS.CSV: the table of an experiment on
# the NIC engine (experiments/nic-ratio.ini, nic-placement.ini): per
# point its NIC settings (from config.txt), its codec and placement, the
# compression ratio and the reduction of communication time against the
# uncompressed point with the same other settings, and the packet,
# header, driver and engine terms of runs.csv.
# Columns: clock_hz framing mtu bandwidth_bps placement codec ratio
#   comm_s reduction packets header_bytes driver_s nic_busy exchange_s
BEGIN { FS = "," }
FNR == 1 { file++ }
# config.txt: "# point I (HASH)" then the point's key file.
file == 1 && /^# point / { pt = $0; sub(/^# point /, "", pt); sub(/ .*/, "", pt); next }
file == 1 && /^\[/ { sec = $0; next }
file == 1 && /=/ {
  k = $0; sub(/ *=.*/, "", k); v = $0; sub(/^[^=]*= */, "", v)
  if (sec == "[nic]" && k == "clock") { v = v; sub(/MHz$/, "e6", v); sub(/GHz$/, "e9", v); clock[pt] = v + 0 }
  if (sec == "[nic]" && k == "framing") framing[pt] = v
  if (sec == "[nic]" && k == "mtu") mtu[pt] = v
  next
}
# runs.csv (codec specs of these experiments hold no commas).
file == 2 && FNR > 1 {
  p = $1
  key = clock[p] " " framing[p] " " mtu[p] " " $6 " " $10
  payload = $25 - $31
  n++; pts[n] = p; keys[n] = key; codec[n] = $9; comm[n] = $22; pay[n] = payload
  pk[n] = $30; hb[n] = $31; drv[n] = $32; busy[n] = $34; ex[n] = $18
  if ($9 == "none") { base_comm[key] = $22; base_pay[key] = payload }
}
END {
  print "clock_hz framing mtu bandwidth_bps placement codec ratio comm_s reduction packets header_bytes driver_s nic_busy exchange_s"
  for (i = 1; i <= n; i++) {
    split(keys[i], f, " ")
    ratio = pay[i] > 0 ? base_pay[keys[i]] / pay[i] : 0
    red = base_comm[keys[i]] > 0 ? 1 - comm[i] / base_comm[keys[i]] : 0
    printf "%g %s %s %g %s %s %.4g %.6g %.4f %g %g %.6g %.4f %.6g\n", f[1], f[2], f[3], f[4], f[5], codec[i], ratio, comm[i], red, pk[i], hb[i], drv[i], busy[i], ex[i]
  }
}
