<?php
require 'check.php';
check('fsockopen.tcp', @fsockopen('127.0.0.1', 80, $errno, $errstr, 1) === false);
check('fsockopen.name', @fsockopen('example.com', 80, $errno, $errstr, 1) === false);
check('stream_socket_client.udp', @stream_socket_client('udp://127.0.0.1:53') === false);
check('stream_socket_server', @stream_socket_server('tcp://127.0.0.1:8080') === false);
check('unix', @stream_socket_client('unix:///run/airlock.sock') === false);
check('no.sockets.ext', !function_exists('socket_create'));
check('dns.none', gethostbyname('example.com') === 'example.com');
check('url.fopen', @file_get_contents('http://127.0.0.1/') === false);
