/// Tables of character encodings for reading text: glyph names to Unicode and the single-byte
/// base encodings of simple fonts (ISO 32000-1, Annex D). The glyph names are those of the Adobe
/// Glyph List for New Fonts with the common ligatures and a few legacy names; other names are
/// read by their form (`uni0041`, `u1F600`, `a.sc`, `f_f_i`) in ``GlyphNames``.
enum EncodingTables {
    /// `name HEX` pairs: a glyph name and its Unicode scalar.
    static let glyphNames = """
        space 20 exclam 21 quotedbl 22 numbersign 23 dollar 24 percent 25 ampersand 26 apostrophe 27 quotesingle 27
        parenleft 28 parenright 29 asterisk 2A plus 2B comma 2C hyphen 2D period 2E slash 2F zero 30 one 31 two 32
        three 33 four 34 five 35 six 36 seven 37 eight 38 nine 39 colon 3A semicolon 3B less 3C equal 3D greater 3E
        question 3F at 40 A 41 B 42 C 43 D 44 E 45 F 46 G 47 H 48 I 49 J 4A K 4B L 4C M 4D N 4E O 4F P 50 Q 51 R 52
        S 53 T 54 U 55 V 56 W 57 X 58 Y 59 Z 5A bracketleft 5B backslash 5C bracketright 5D asciicircum 5E
        underscore 5F grave 60 a 61 b 62 c 63 d 64 e 65 f 66 g 67 h 68 i 69 j 6A k 6B l 6C m 6D n 6E o 6F p 70 q 71
        r 72 s 73 t 74 u 75 v 76 w 77 x 78 y 79 z 7A braceleft 7B bar 7C braceright 7D asciitilde 7E nbspace A0
        nonbreakingspace A0 exclamdown A1 cent A2 sterling A3 currency A4 yen A5 brokenbar A6 section A7 dieresis A8
        copyright A9 ordfeminine AA guillemotleft AB logicalnot AC sfthyphen AD registered AE macron AF degree B0
        plusminus B1 acute B4 mu B5 mu1 B5 paragraph B6 middot B7 periodcentered B7 cedilla B8 ordmasculine BA
        guillemotright BB onequarter BC onehalf BD threequarters BE questiondown BF Agrave C0 Aacute C1
        Acircumflex C2 Atilde C3 Adieresis C4 Aring C5 AE C6 Ccedilla C7 Egrave C8 Eacute C9 Ecircumflex CA
        Edieresis CB Igrave CC Iacute CD Icircumflex CE Idieresis CF Eth D0 Ntilde D1 Ograve D2 Oacute D3
        Ocircumflex D4 Otilde D5 Odieresis D6 multiply D7 Oslash D8 Ugrave D9 Uacute DA Ucircumflex DB Udieresis DC
        Yacute DD Thorn DE germandbls DF agrave E0 aacute E1 acircumflex E2 atilde E3 adieresis E4 aring E5 ae E6
        ccedilla E7 egrave E8 eacute E9 ecircumflex EA edieresis EB igrave EC iacute ED icircumflex EE idieresis EF
        eth F0 ntilde F1 ograve F2 oacute F3 ocircumflex F4 otilde F5 odieresis F6 divide F7 oslash F8 ugrave F9
        uacute FA ucircumflex FB udieresis FC yacute FD thorn FE ydieresis FF Amacron 100 amacron 101 Abreve 102
        abreve 103 Aogonek 104 aogonek 105 Cacute 106 cacute 107 Ccircumflex 108 ccircumflex 109 Cdotaccent 10A
        cdotaccent 10B Ccaron 10C ccaron 10D Dcaron 10E dcaron 10F Dcroat 110 dcroat 111 Emacron 112 emacron 113
        Ebreve 114 ebreve 115 Edotaccent 116 edotaccent 117 Eogonek 118 eogonek 119 Ecaron 11A ecaron 11B
        Gcircumflex 11C gcircumflex 11D Gbreve 11E gbreve 11F Gdotaccent 120 gdotaccent 121 Hcircumflex 124
        hcircumflex 125 Hbar 126 hbar 127 Itilde 128 itilde 129 Imacron 12A imacron 12B Ibreve 12C ibreve 12D
        Iogonek 12E iogonek 12F Idotaccent 130 dotlessi 131 IJ 132 ij 133 Jcircumflex 134 jcircumflex 135
        kgreenlandic 138 Lacute 139 lacute 13A Lcaron 13D lcaron 13E Ldot 13F ldot 140 Lslash 141 lslash 142
        Nacute 143 nacute 144 Ncaron 147 ncaron 148 napostrophe 149 Eng 14A eng 14B Omacron 14C omacron 14D
        Obreve 14E obreve 14F Ohungarumlaut 150 ohungarumlaut 151 OE 152 oe 153 Racute 154 racute 155 Rcaron 158
        rcaron 159 Sacute 15A sacute 15B Scircumflex 15C scircumflex 15D Scedilla 15E scedilla 15F Scaron 160
        scaron 161 Tcaron 164 tcaron 165 Tbar 166 tbar 167 Utilde 168 utilde 169 Umacron 16A umacron 16B Ubreve 16C
        ubreve 16D Uring 16E uring 16F Uhungarumlaut 170 uhungarumlaut 171 Uogonek 172 uogonek 173 Wcircumflex 174
        wcircumflex 175 Ycircumflex 176 ycircumflex 177 Ydieresis 178 Zacute 179 zacute 17A Zdotaccent 17B
        zdotaccent 17C Zcaron 17D zcaron 17E longs 17F florin 192 Ohorn 1A0 ohorn 1A1 Uhorn 1AF uhorn 1B0 Gcaron 1E6
        gcaron 1E7 Aringacute 1FA aringacute 1FB AEacute 1FC aeacute 1FD Oslashacute 1FE oslashacute 1FF
        dotlessj 237 circumflex 2C6 caron 2C7 breve 2D8 dotaccent 2D9 ring 2DA ogonek 2DB tilde 2DC hungarumlaut 2DD
        gravecomb 300 acutecomb 301 tildecomb 303 hookabovecomb 309 dotbelowcomb 323 tonos 384 dieresistonos 385
        Alphatonos 386 anoteleia 387 Epsilontonos 388 Etatonos 389 Iotatonos 38A Omicrontonos 38C Upsilontonos 38E
        Omegatonos 38F iotadieresistonos 390 Alpha 391 Beta 392 Gamma 393 Epsilon 395 Zeta 396 Eta 397 Theta 398
        Iota 399 Kappa 39A Lambda 39B Mu 39C Nu 39D Xi 39E Omicron 39F Pi 3A0 Rho 3A1 Sigma 3A3 Tau 3A4 Upsilon 3A5
        Phi 3A6 Chi 3A7 Psi 3A8 Iotadieresis 3AA Upsilondieresis 3AB alphatonos 3AC epsilontonos 3AD etatonos 3AE
        iotatonos 3AF upsilondieresistonos 3B0 alpha 3B1 beta 3B2 gamma 3B3 delta 3B4 epsilon 3B5 zeta 3B6 eta 3B7
        theta 3B8 iota 3B9 kappa 3BA lambda 3BB nu 3BD xi 3BE omicron 3BF pi 3C0 rho 3C1 sigma1 3C2 sigma 3C3
        tau 3C4 upsilon 3C5 phi 3C6 chi 3C7 psi 3C8 omega 3C9 iotadieresis 3CA upsilondieresis 3CB omicrontonos 3CC
        upsilontonos 3CD omegatonos 3CE theta1 3D1 Upsilon1 3D2 phi1 3D5 omega1 3D6 Wgrave 1E80 wgrave 1E81
        Wacute 1E82 wacute 1E83 Wdieresis 1E84 wdieresis 1E85 Ygrave 1EF2 ygrave 1EF3 figuredash 2012 endash 2013
        emdash 2014 underscoredbl 2017 quoteleft 2018 quoteright 2019 quotesinglbase 201A quotereversed 201B
        quotedblleft 201C quotedblright 201D quotedblbase 201E dagger 2020 daggerdbl 2021 bullet 2022
        onedotenleader 2024 twodotenleader 2025 ellipsis 2026 perthousand 2030 minute 2032 second 2033
        guilsinglleft 2039 guilsinglright 203A exclamdbl 203C fraction 2044 colonmonetary 20A1 franc 20A3 lira 20A4
        peseta 20A7 dong 20AB Euro 20AC Ifraktur 2111 weierstrass 2118 Rfraktur 211C prescription 211E
        trademark 2122 Ohm 2126 Omega 2126 estimated 212E aleph 2135 onethird 2153 twothirds 2154 oneeighth 215B
        threeeighths 215C fiveeighths 215D seveneighths 215E arrowleft 2190 arrowup 2191 arrowright 2192
        arrowdown 2193 arrowboth 2194 arrowupdn 2195 arrowupdnbse 21A8 carriagereturn 21B5 arrowdblleft 21D0
        arrowdblup 21D1 arrowdblright 21D2 arrowdbldown 21D3 arrowdblboth 21D4 universal 2200 partialdiff 2202
        existential 2203 emptyset 2205 Delta 2206 gradient 2207 element 2208 notelement 2209 suchthat 220B
        product 220F summation 2211 minus 2212 asteriskmath 2217 radical 221A proportional 221D infinity 221E
        orthogonal 221F angle 2220 logicaland 2227 logicalor 2228 intersection 2229 union 222A integral 222B
        therefore 2234 similar 223C congruent 2245 approxequal 2248 notequal 2260 equivalence 2261 lessequal 2264
        greaterequal 2265 propersubset 2282 propersuperset 2283 notsubset 2284 reflexsubset 2286 reflexsuperset 2287
        circleplus 2295 circlemultiply 2297 perpendicular 22A5 dotmath 22C5 house 2302 revlogicalnot 2310
        integraltp 2320 integralbt 2321 angleleft 2329 angleright 232A SF100000 2500 SF110000 2502 SF010000 250C
        SF030000 2510 SF020000 2514 SF040000 2518 SF080000 251C SF090000 2524 SF060000 252C SF070000 2534
        SF050000 253C SF430000 2550 SF240000 2551 SF510000 2552 SF520000 2553 SF390000 2554 SF220000 2555
        SF210000 2556 SF250000 2557 SF500000 2558 SF490000 2559 SF380000 255A SF280000 255B SF270000 255C
        SF260000 255D SF360000 255E SF370000 255F SF420000 2560 SF190000 2561 SF200000 2562 SF230000 2563
        SF470000 2564 SF480000 2565 SF410000 2566 SF450000 2567 SF460000 2568 SF400000 2569 SF540000 256A
        SF530000 256B SF440000 256C upblock 2580 dnblock 2584 block 2588 lfblock 258C rtblock 2590 ltshade 2591
        shade 2592 dkshade 2593 filledbox 25A0 H22073 25A1 H18543 25AA H18551 25AB filledrect 25AC triagup 25B2
        triagrt 25BA triagdn 25BC triaglf 25C4 lozenge 25CA circle 25CB H18533 25CF invbullet 25D8 invcircle 25D9
        openbullet 25E6 smileface 263A invsmileface 263B sun 263C female 2640 male 2642 spade 2660 club 2663
        heart 2665 diamond 2666 musicalnote 266A musicalnotedbl 266B ff FB00 fi FB01 fl FB02 ffi FB03 ffl FB04
        """

    /// StandardEncoding for the codes 0x80–0xFF (0 where the code has no glyph); below 0x80 it is
    /// ASCII except 0x27 (quoteright, U+2019) and 0x60 (quoteleft, U+2018).
    static let standardHigh = """
        0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 A1 A2 A3 2044 A5 192 A7 A4 27 201C AB 2039
        203A FB01 FB02 0 2013 2020 2021 B7 0 B6 2022 201A 201E 201D BB 2026 2030 0 BF 0 60 B4 2C6 2DC AF 2D8 2D9 A8
        0 2DA B8 0 2DD 2DB 2C7 2014 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 C6 0 AA 0 0 0 0 141 D8 152 BA 0 0 0 0 0 E6 0 0 0
        131 0 0 142 F8 153 DF 0 0 0 0
        """

    /// MacRomanEncoding for the codes 0x80–0xFF; below 0x80 it is ASCII.
    static let macRomanHigh = """
        C4 C5 C7 C9 D1 D6 DC E1 E0 E2 E4 E3 E5 E7 E9 E8 EA EB ED EC EE EF F1 F3 F2 F4 F6 F5 FA F9 FB FC 2020 B0 A2
        A3 A7 2022 B6 DF AE A9 2122 B4 A8 2260 C6 D8 221E B1 2264 2265 A5 B5 2202 2211 220F 3C0 222B AA BA 3A9 E6 F8
        BF A1 AC 221A 192 2248 2206 AB BB 2026 A0 C0 C3 D5 152 153 2013 2014 201C 201D 2018 2019 F7 25CA FF 178 2044
        20AC 2039 203A FB01 FB02 2021 B7 201A 201E 2030 C2 CA C1 CB C8 CD CE CF CC D3 D4 F8FF D2 DA DB D9 131 2C6
        2DC AF 2D8 2D9 2DA B8 2DD 2DB 2C7
        """

    /// WinAnsiEncoding for the codes 0x80–0x9F (0 where undefined); 0xA0–0xFF are Latin-1 and
    /// below 0x80 it is ASCII.
    static let winAnsiC1 = """
        20AC 0 201A 192 201E 2026 2020 2021 2C6 2030 160 2039 152 0 17D 0 0 2018 2019 201C 201D 2022 2013 2014 2DC
        2122 161 203A 153 0 17E 178
        """

    /// The 391 standard strings of CFF fonts (Adobe Technical Note #5176, Appendix A), in
    /// order of their string identifier: glyph names of most Type 1 fonts.
    static let cffStandardStrings = """
        .notdef space exclam quotedbl numbersign dollar percent ampersand quoteright parenleft parenright asterisk
        plus comma hyphen period slash zero one two three four five six seven eight nine colon semicolon less equal
        greater question at A B C D E F G H I J K L M N O P Q R S T U V W X Y Z bracketleft backslash bracketright
        asciicircum underscore quoteleft a b c d e f g h i j k l m n o p q r s t u v w x y z braceleft bar
        braceright asciitilde exclamdown cent sterling fraction yen florin section currency quotesingle quotedblleft
        guillemotleft guilsinglleft guilsinglright fi fl endash dagger daggerdbl periodcentered paragraph bullet
        quotesinglbase quotedblbase quotedblright guillemotright ellipsis perthousand questiondown grave acute
        circumflex tilde macron breve dotaccent dieresis ring cedilla hungarumlaut ogonek caron emdash AE
        ordfeminine Lslash Oslash OE ordmasculine ae dotlessi lslash oslash oe germandbls onesuperior logicalnot mu
        trademark Eth onehalf plusminus Thorn onequarter divide brokenbar degree thorn threequarters twosuperior
        registered minus eth multiply threesuperior copyright Aacute Acircumflex Adieresis Agrave Aring Atilde
        Ccedilla Eacute Ecircumflex Edieresis Egrave Iacute Icircumflex Idieresis Igrave Ntilde Oacute Ocircumflex
        Odieresis Ograve Otilde Scaron Uacute Ucircumflex Udieresis Ugrave Yacute Ydieresis Zcaron aacute
        acircumflex adieresis agrave aring atilde ccedilla eacute ecircumflex edieresis egrave iacute icircumflex
        idieresis igrave ntilde oacute ocircumflex odieresis ograve otilde scaron uacute ucircumflex udieresis
        ugrave yacute ydieresis zcaron exclamsmall Hungarumlautsmall dollaroldstyle dollarsuperior ampersandsmall
        Acutesmall parenleftsuperior parenrightsuperior twodotenleader onedotenleader zerooldstyle oneoldstyle
        twooldstyle threeoldstyle fouroldstyle fiveoldstyle sixoldstyle sevenoldstyle eightoldstyle nineoldstyle
        commasuperior threequartersemdash periodsuperior questionsmall asuperior bsuperior centsuperior dsuperior
        esuperior isuperior lsuperior msuperior nsuperior osuperior rsuperior ssuperior tsuperior ff ffi ffl
        parenleftinferior parenrightinferior Circumflexsmall hyphensuperior Gravesmall Asmall Bsmall Csmall Dsmall
        Esmall Fsmall Gsmall Hsmall Ismall Jsmall Ksmall Lsmall Msmall Nsmall Osmall Psmall Qsmall Rsmall Ssmall
        Tsmall Usmall Vsmall Wsmall Xsmall Ysmall Zsmall colonmonetary onefitted rupiah Tildesmall exclamdownsmall
        centoldstyle Lslashsmall Scaronsmall Zcaronsmall Dieresissmall Brevesmall Caronsmall Dotaccentsmall
        Macronsmall figuredash hypheninferior Ogoneksmall Ringsmall Cedillasmall questiondownsmall oneeighth
        threeeighths fiveeighths seveneighths onethird twothirds zerosuperior foursuperior fivesuperior sixsuperior
        sevensuperior eightsuperior ninesuperior zeroinferior oneinferior twoinferior threeinferior fourinferior
        fiveinferior sixinferior seveninferior eightinferior nineinferior centinferior dollarinferior periodinferior
        commainferior Agravesmall Aacutesmall Acircumflexsmall Atildesmall Adieresissmall Aringsmall AEsmall
        Ccedillasmall Egravesmall Eacutesmall Ecircumflexsmall Edieresissmall Igravesmall Iacutesmall
        Icircumflexsmall Idieresissmall Ethsmall Ntildesmall Ogravesmall Oacutesmall Ocircumflexsmall Otildesmall
        Odieresissmall OEsmall Oslashsmall Ugravesmall Uacutesmall Ucircumflexsmall Udieresissmall Yacutesmall
        Thornsmall Ydieresissmall 001.000 001.001 001.002 001.003 Black Bold Book Light Medium Regular Roman
        Semibold
        """
}
