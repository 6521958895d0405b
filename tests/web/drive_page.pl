#!/usr/bin/perl
# Opens a page in headless Chromium, waits until <body data-autotest> is "done" or "error", then writes the page's
# DOM (and optionally a PNG screenshot). Chromium is driven over --remote-debugging-pipe (the DevTools protocol:
# JSON messages ended by a NUL byte, written to its fd 3, read from its fd 4).
#
# Why not `chromium --dump-dom --virtual-time-budget=...`: --dump-dom alone dumps at the load event, before the
# streamed answer arrives; with a virtual time budget the dump waits for the fetch, but virtual time stands still
# while a fetch is pending, so performance.now() does not move and the page's TTFT and tokens/s read 0. Over the
# pipe the page runs in real time and the test polls its DOM.
#
# usage: drive_page.pl [--language=LANG] [--hover=N] CHROMIUM URL DOM_OUT [SCREENSHOT_OUT]
#   --language=zh-CN  the browser's language (navigator.languages, Accept-Language), as a Chinese user's browser has
#   --hover=N         once the page is done, move the mouse onto the N-th token chip (0 = the first) and wait until
#                     the inspector shows that token; <body data-hovered> then holds the chip's logprobs entry as the
#                     page received it, for check_page.pl to compare with what the inspector shows
# Environment: PAGE_TIMEOUT seconds, default 120.
use strict;
use warnings;
use File::Temp qw(tempdir);
use IO::Select;
use JSON::PP;
use MIME::Base64;
use POSIX qw(dup2 _exit WNOHANG);
use Time::HiRes qw(sleep time);

my ($language, $hover);
while (@ARGV && $ARGV[0] =~ /\A--/) {
  my $option = shift @ARGV;
  if ($option =~ /\A--language=([A-Za-z-]+)\z/) { $language = $1; }
  elsif ($option =~ /\A--hover=(\d+)\z/) { $hover = $1; }
  else { die "drive_page: unknown option $option\n"; }
}
my ($chromium, $url, $dom_out, $screenshot_out) = @ARGV;
die "usage: drive_page.pl [--language=LANG] [--hover=N] CHROMIUM URL DOM_OUT [SCREENSHOT_OUT]\n" unless defined $dom_out;
my $timeout = $ENV{PAGE_TIMEOUT} || 120;
my $deadline = time + $timeout;
my $profile = tempdir('minigen-chromium-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new->utf8->canonical;

# Hold descriptors 3 and 4 while the pipes are made, so that no pipe end lands on them (ctest starts tests with 3
# free): the child's dup2 onto 3 and 4 must then always copy, never be a no-op that keeps close-on-exec.
open(my $hold_3, '<', '/dev/null') or die "/dev/null: $!";
open(my $hold_4, '<', '/dev/null') or die "/dev/null: $!";
pipe(my $to_chromium_read, my $to_chromium) or die "pipe: $!";
pipe(my $from_chromium, my $from_chromium_write) or die "pipe: $!";
my $chromium_pid = fork() // die "fork: $!";
if ($chromium_pid == 0) {
  setpgrp(0, 0);  # its own process group, so that the parent can end Chromium with all its helper processes
  # dup2 onto another descriptor gives a copy without close-on-exec, which Chromium inherits.
  dup2(fileno($to_chromium_read), 3) // _exit(126);
  dup2(fileno($from_chromium_write), 4) // _exit(126);
  open(STDOUT, '>', "$profile/chromium.log") or _exit(127);
  open(STDERR, '>&', \*STDOUT) or _exit(127);
  { exec($chromium, '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe', '--no-first-run',
       '--hide-scrollbars', '--mute-audio', "--user-data-dir=$profile/profile", '--window-size=1200,900',
       'about:blank') };  # the braces tell Perl that the line after exec is meant
  _exit(127);
}
close($to_chromium_read);
close($from_chromium_write);
$SIG{PIPE} = 'IGNORE';

my $chromium_ended = 0;
sub end_chromium {
  return if $chromium_ended;
  $chromium_ended = 1;
  kill('TERM', -$chromium_pid);
  for (1 .. 50) {
    return if waitpid($chromium_pid, WNOHANG) != 0;
    sleep(0.1);
  }
  kill('KILL', -$chromium_pid);
  waitpid($chromium_pid, 0);
}

END { end_chromium() if $chromium_pid; }  # also when a die below ends the script

sub chromium_exit {
  return 'it is still running' if waitpid($chromium_pid, WNOHANG) == 0;
  $chromium_ended = 1;
  my $status = $?;
  return ($status >> 8) == 126 ? 'could not set up its pipe' : ($status >> 8) == 127 ? "cannot run $chromium"
       : "it exited with status " . ($status >> 8) . ($status & 127 ? ", signal " . ($status & 127) : '');
}

sub fail {
  my ($message) = @_;
  my $log = '';
  if (open(my $handle, '<', "$profile/chromium.log")) { local $/; $log = <$handle> // ''; }
  end_chromium();
  my @lines = grep { !/dbus/ } split /\n/, $log;  # D-Bus complaints are noise in a container
  $log = join("\n", @lines > 15 ? @lines[-15 .. -1] : @lines);  # the last lines are enough
  die "drive_page: $message\n" . ($log ne '' ? "--- chromium log (end)\n$log\n" : '');
}

my $next_id = 0;
my $buffer = '';
my %replies;
my $select = IO::Select->new($from_chromium);

sub read_messages {
  my ($wait_seconds) = @_;
  return unless $select->can_read($wait_seconds);
  my $read = sysread($from_chromium, $buffer, 1 << 20, length $buffer);
  fail('Chromium closed the DevTools pipe: ' . chromium_exit()) unless $read;
  while ((my $end = index($buffer, "\0")) >= 0) {
    my $message = $json->decode(substr($buffer, 0, $end));
    substr($buffer, 0, $end + 1) = '';
    $replies{$message->{id}} = $message if defined $message->{id};  # events (no id) are not needed
  }
}

sub call {
  my ($method, $params, $session) = @_;
  my $id = ++$next_id;
  my $message = {id => $id, method => $method, params => $params // {}};
  $message->{sessionId} = $session if defined $session;
  my $bytes = $json->encode($message) . "\0";
  my $written = syswrite($to_chromium, $bytes);
  fail("cannot write to Chromium ($!): " . chromium_exit()) unless defined $written && $written == length $bytes;
  until (exists $replies{$id}) {
    fail("no answer to $method within ${timeout}s") if time > $deadline;
    read_messages(0.5);
  }
  my $reply = delete $replies{$id};
  fail("$method failed: " . $json->encode($reply->{error})) if $reply->{error};
  return $reply->{result};
}

sub evaluate {
  my ($session, $expression) = @_;
  my $result = call('Runtime.evaluate', {expression => $expression, returnByValue => JSON::PP::true}, $session);
  if (my $details = $result->{exceptionDetails}) {
    fail("page script threw: " . ($details->{exception}{description} // $details->{text}));
  }
  return $result->{result}{value};
}

my $target = call('Target.createTarget', {url => 'about:blank'})->{targetId};
my $session = call('Target.attachToTarget', {targetId => $target, flatten => JSON::PP::true})->{sessionId};
call('Emulation.setDeviceMetricsOverride',
     {width => 1200, height => 900, deviceScaleFactor => 1, mobile => JSON::PP::false}, $session);
if (defined $language) {  # keeps the browser's own user agent; only the languages change
  my $agent = call('Browser.getVersion')->{userAgent};
  call('Emulation.setUserAgentOverride', {userAgent => $agent, acceptLanguage => $language}, $session);
}
my $navigation = call('Page.navigate', {url => $url}, $session);
fail("cannot load $url: $navigation->{errorText}") if $navigation->{errorText};

my $state = '';
while (1) {
  $state = evaluate($session, "document.body ? (document.body.dataset.autotest || '') : ''") // '';
  last if $state eq 'done' || $state eq 'error';
  fail("the page did not finish within ${timeout}s (data-autotest is '$state')") if time > $deadline;
  sleep(0.2);
}
if (defined $hover && $state eq 'done') {
  # A real mouse move (the DevTools Input domain), so the chip's mouseenter handler runs as it does for a user.
  my $point = evaluate($session, <<"SCRIPT");
(() => {
  const chip = document.querySelectorAll('#conversation .chip')[$hover];
  if (!chip) return null;
  chip.scrollIntoView({ block: 'center' });
  document.body.dataset.hovered = JSON.stringify(chip.entry);
  const box = chip.getBoundingClientRect();
  return { x: box.left + box.width / 2, y: box.top + box.height / 2, token_id: chip.entry.token_id };
})()
SCRIPT
  fail("the page has no token chip $hover to hover over") unless $point;
  call('Input.dispatchMouseEvent', {type => 'mouseMoved', x => $point->{x}, y => $point->{y}}, $session);
  my $shown = '';
  for (1 .. 50) {
    $shown = evaluate($session, "(document.querySelector('#inspector-body .picked') || {dataset: {}}).dataset.tokenId || ''");
    last if $shown eq $point->{token_id};
    sleep(0.1);
  }
  fail("hovering chip $hover (token $point->{token_id}) left the inspector on token '$shown'")
    unless $shown eq $point->{token_id};
  evaluate($session, "document.getElementById('inspector').scrollIntoView({ block: 'nearest' })");  # for a screenshot
}
my $dom = evaluate($session, 'document.documentElement.outerHTML');
open(my $out, '>:encoding(UTF-8)', $dom_out) or fail("cannot write $dom_out: $!");
print $out "<!DOCTYPE html>\n$dom\n";
close($out);
if (defined $screenshot_out) {
  sleep(0.3);  # let the last frame paint
  my $png = call('Page.captureScreenshot', {format => 'png'}, $session)->{data};
  open(my $image, '>:raw', $screenshot_out) or fail("cannot write $screenshot_out: $!");
  print $image decode_base64($png);
  close($image);
}
eval { call('Browser.close') };
end_chromium();
print "page finished: data-autotest=$state\n";
