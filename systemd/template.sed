# template.sed - fpgad@.service from fpgad.service.in (sed -f): one fpgad
# per card, the instance name NAME (systemctl start fpgad@NAME) naming its
# configuration /etc/fpgad/NAME.conf and its runtime directory
# /run/fpgad/NAME, where clients find it by name (fpgactl --card NAME,
# fpgad_connect_card(), $FPGAD_CARD).  Every other line, the hardening
# included, is fpgad.service's.  fpgad.service removes all of /run/fpgad
# when it stops: the two kinds conflict, a host runs one or the other.
s|^Description=fpgad: \(.*\)$|Description=fpgad for card %i: \1|
/^Wants=/a Conflicts=fpgad.service
s|/etc/fpgad/fpgad\.conf|/etc/fpgad/%i.conf|g
s|^\(ExecStart=.* -c /etc/fpgad/%i\.conf\)$|\1 --runtime-dir /run/fpgad/%i|
s|^RuntimeDirectory=fpgad$|RuntimeDirectory=fpgad/%i|
