import Foundation

/// Pages and payloads for the UV index's tests, one copy for the unit tests and the end-to-end ones.
public enum UVFixtures {
    /// Shaped like the page: a header table, a body table whose third cell holds `<dl><dd>` and the data table with
    /// the location heading, the header row in `<i>`, the day rows with `&nbsp;`, attributes and odd spacing, then
    /// rows that are not data (a footnote, an archive link) and more tables after.
    /// Its four day rows start at `year`-`month`-`day` (12 Jun 2014 by default), each written as the page writes
    /// it (`12 Jun 2014`, `13&nbsp;Jun&nbsp;2014`, `14 jun 2014`): the values 7.3, 7.5, 6.9, 7.1 and 324.5, 318.2,
    /// 335.0, 329.9 DU.
    public static func temisPage(year: Int = 2014, month: Int = 6, day: Int = 12) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let first = calendar.date(from: DateComponents(year: year, month: month, day: day))!
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = calendar.timeZone
        formatter.dateFormat = "d MMM yyyy"
        let days = (0..<4).map { formatter.string(from: first.addingTimeInterval(Double($0) * 86_400)) }
        return """
            <!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
            <html><head><title>TEMIS -- UV index and UV dose -- nrt</title>
            <style type="text/css"> td { font-size: 10pt } /* <tr><td>1 Jan 2000</td> */ </style>
            <script>var rows = "<tr><td>2 Jan 2000</td><td>9.9</td><td>300 DU</td></tr>";</script>
            </head>
            <BODY bgcolor="#FFFFFF">
            <table width="100%" cellpadding=0><tr><td><a href="/"><img src="/images/temis_logo.gif" alt="TEMIS >>"></a></td>
            <td><h1>Tropospheric Emission Monitoring Internet Service</h1></td></tr></table>
            <table border=0 width="100%">
            <tr>
              <td valign=top width=150><table><tr><td><a href="/uvradiation/">UV radiation</a></td></tr>
                <tr><td><a href="/protocols/">Ozone</a></td></tr></table></td>
              <td width=20>&nbsp;</td>
              <td valign=top>
              <!-- the forecast table: <tr><td>3 Jan 2000</td><td>1.0</td><td>300 DU</td></tr> -->
              <dl><dd>
              <table border=0 cellpadding=2 CELLSPACING=0>
              <tr><td colspan=3><h2>De Bilt &nbsp;(52.10&deg;N, 5.18&deg;E)</h2></td></tr>
              <tr>
                <td align=left ><i>&nbsp;<br>&nbsp; Date</i> </td>
                <td align=right><i>UV <br>&nbsp; index</i> </td>
                <td align=right><i>ozone <br>column</i> </td>
              </tr>
              <TR><TD align=right nowrap>&nbsp; \(days[0]) </TD>
                <TD align=right nowrap> 7.3 </TD>
                <TD align=right nowrap>&nbsp;  324.5 DU </TD></TR>
              <tr><td align=right nowrap>&#160;\(days[1].replacingOccurrences(of: " ", with: "&nbsp;"))</td><td align="right">7.5</td><td>318.2&nbsp;DU</td>
              <tr><td align=right nowrap>\(days[2].lowercased())</td>
                  <td align=right nowrap>
                     6.9
                  </td>
                  <td align=right nowrap>335.0 du</td></tr>
              <tr><td>\(days[3])</td><td><b>7.1</b></td><td><font color="#000080">329.9</font> DU</td></tr>
              <tr><td colspan=3>&nbsp;</td></tr>
              <tr><td colspan=3><font size=-1>Values at local solar noon; clear sky.</font></td></tr>
              <tr><td colspan=3><a href="archives.php?lon=5.18&amp;lat=52.1">Archive for 2014</a></td></tr>
              </table>
              </dd></dl>
              </td>
            </tr>
            </table>
            <table><tr><td>Last modified: 12 June 2014</td><td>&copy; KNMI/ESA</td></tr></table>
            </body></html>
            """
    }
}
